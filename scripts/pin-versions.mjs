// Rewrites every workspace package.json so dependency ranges become the exact installed version.
import { readFileSync, writeFileSync, readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';

const dirs = [
  '.',
  ...['packages', 'services'].flatMap((d) => readdirSync(d).map((n) => join(d, n))),
  'test-e2e',
  'bench',
];
for (const dir of dirs) {
  const file = join(dir, 'package.json');
  if (!existsSync(file)) continue;
  const pkg = JSON.parse(readFileSync(file, 'utf8'));
  const req = createRequire(join(process.cwd(), dir, 'index.js'));
  for (const field of ['dependencies', 'devDependencies']) {
    for (const [name, range] of Object.entries(pkg[field] ?? {})) {
      if (range.startsWith('workspace:') || /^\d/.test(range)) continue;
      let version;
      try {
        version = JSON.parse(readFileSync(req.resolve(`${name}/package.json`), 'utf8')).version;
      } catch {
        const base = join(dir, 'node_modules', name, 'package.json');
        version = JSON.parse(readFileSync(base, 'utf8')).version;
      }
      pkg[field][name] = version;
    }
  }
  writeFileSync(file, JSON.stringify(pkg, null, 2) + '\n');
}
