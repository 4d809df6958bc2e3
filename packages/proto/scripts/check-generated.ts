// Fails when the checked-in generated code differs from what `pnpm proto:generate` produces.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const out = mkdtempSync(join(tmpdir(), 'proto-check-'));

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

try {
  const bins = [join(root, 'node_modules', '.bin'), join(root, '..', '..', 'node_modules', '.bin')];
  const env = { ...process.env, PATH: [...bins, process.env.PATH ?? ''].join(':') };
  const prettierConfig = join(root, '..', '..', '.prettierrc.json');
  execFileSync('buf', ['generate', '-o', out], { cwd: root, env, stdio: 'inherit' });
  execFileSync('prettier', ['--config', prettierConfig, '--write', join(out, 'src/gen')], {
    cwd: root,
    env,
    stdio: 'ignore',
  });
  const expected = new Map(files(join(out, 'src/gen')).map((f) => [relative(join(out, 'src/gen'), f), f]));
  const actual = new Map(files(join(root, 'src/gen')).map((f) => [relative(join(root, 'src/gen'), f), f]));
  const stale = [...new Set([...expected.keys(), ...actual.keys()])].filter((name) => {
    const a = actual.get(name);
    const e = expected.get(name);
    return !a || !e || readFileSync(a, 'utf8') !== readFileSync(e, 'utf8');
  });
  if (stale.length > 0) {
    console.error(`Generated code is out of date (${stale.join(', ')}). Run: pnpm proto:generate`);
    process.exit(1);
  }
  console.log('proto: generated code is current');
} finally {
  rmSync(out, { recursive: true, force: true });
}
