// Image build check: every third-party package that dist/switchyard.mjs and the chunks it
// loads (dist/chunks/) import must resolve from the node_modules the image ships, or the
// container would only fail at start-up (or, for a package loaded on first use, later).
// Run it from a copy placed next to the bundle:
//
//   cp deploy/docker/check-externals.mjs /out/dist/ && node /out/dist/check-externals.mjs switchyard.mjs
//
// Looks at the static imports esbuild hoists to the start of a line, at dynamic import("...")
// of packages, at its __require("...") calls for CommonJS externals and at packages loaded
// through createRequire(import.meta.url)("...").
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const bundle = join(here, process.argv[2] ?? 'switchyard.mjs');
const chunks = join(here, 'chunks');
const files = [
  bundle,
  ...(existsSync(chunks)
    ? readdirSync(chunks)
        .filter((f) => f.endsWith('.mjs'))
        .map((f) => join(chunks, f))
    : []),
];
const source = files.map((f) => readFileSync(f, 'utf8')).join('\n');

const builtins = new Set(builtinModules);
const specifiers = new Set();
const patterns = [
  /^(?:import|export)\s[^;]*?\sfrom\s*["']([^"']+)["']/gm,
  /^import\s*["']([^"']+)["']/gm,
  /\b__require\(\s*["']([^"']+)["']\s*\)/g,
  /\bimport\(\s*["']([^"'./][^"']*)["']\s*\)/g,
  /\bcreateRequire\(import\.meta\.url\)\(\s*["']([^"']+)["']/g,
];
for (const re of patterns) {
  for (const m of source.matchAll(re)) specifiers.add(m[1]);
}

const packageName = (s) => (s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : s.split('/')[0]);
const external = [...specifiers].filter(
  (s) => !s.startsWith('.') && !s.startsWith('/') && !s.startsWith('node:') && !builtins.has(packageName(s)),
);

const missing = [];
for (const s of external.sort()) {
  try {
    import.meta.resolve(s);
  } catch (e) {
    missing.push(`${s} (${e.code ?? e.message})`);
  }
}
if (missing.length > 0) {
  console.error(
    `${bundle}: ${missing.length} imported package(s) do not resolve from the image's node_modules:`,
  );
  for (const m of missing) console.error(`  ${m}`);
  process.exit(1);
}
console.log(`${bundle} (${files.length} files): all ${external.length} external package imports resolve`);
