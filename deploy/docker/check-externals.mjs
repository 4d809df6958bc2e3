// Image build check: every third-party package that dist/switchyard.mjs imports
// must resolve from the node_modules the image ships, or the container would
// only fail at start-up. Run it from a copy placed next to the bundle:
//
//   cp deploy/docker/check-externals.mjs /out/dist/ && node /out/dist/check-externals.mjs switchyard.mjs
//
// Looks at the static imports esbuild hoists to the start of a line and at its
// __require("...") calls for CommonJS externals.
import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const bundle = join(here, process.argv[2] ?? 'switchyard.mjs');
const source = readFileSync(bundle, 'utf8');

const builtins = new Set(builtinModules);
const specifiers = new Set();
const patterns = [
  /^(?:import|export)\s[^;]*?\sfrom\s*["']([^"']+)["']/gm,
  /^import\s*["']([^"']+)["']/gm,
  /\b__require\(\s*["']([^"']+)["']\s*\)/g,
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
console.log(`${bundle}: all ${external.length} external package imports resolve`);
