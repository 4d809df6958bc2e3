// Runs one group of tests with node's test runner and prints "<group>: N passed, N failed".
//   unit      every *.test.ts beside the code (no external services needed)
//   contract  every *.contract.test.ts: adapters against real Postgres, Kafka and Redis
//   e2e       test-e2e/**/*.test.ts: the services as separate processes on real dependencies
//   browser   console/test/**/*.test.ts: the console in Debian's Chromium (headless), against all-in-one
//   clients   every *.clients.test.ts: client libraries (Node and Python) through the gateway,
//             with the Python ones from the venv scripts/python-clients.sh makes
import { spawn } from 'node:child_process';
import { appendFileSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const group = process.argv[2];
const filter = process.argv[3];

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) return [];
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}

const sources = ['packages', 'services', 'bench', 'scripts'].flatMap((d) => walk(join(root, d)));
const files = (() => {
  switch (group) {
    case 'unit':
      return sources.filter(
        (f) => f.endsWith('.test.ts') && !f.endsWith('.contract.test.ts') && !f.endsWith('.clients.test.ts'),
      );
    case 'contract':
      return sources.filter((f) => f.endsWith('.contract.test.ts'));
    case 'clients':
      return sources.filter((f) => f.endsWith('.clients.test.ts'));
    case 'e2e':
      return walk(join(root, 'test-e2e')).filter((f) => f.endsWith('.test.ts'));
    case 'browser':
      return walk(join(root, 'console', 'test')).filter((f) => f.endsWith('.test.ts'));
    default:
      console.error('usage: run-tests.ts unit|contract|e2e|clients|browser [path-filter]');
      process.exit(2);
  }
})().filter((f) => !filter || f.includes(filter));

if (files.length === 0) {
  console.error(`${group}: no test files found`);
  process.exit(1);
}

mkdirSync(join(root, '.data'), { recursive: true });
const args = [
  '--import',
  'tsx',
  '--test',
  '--test-reporter=spec',
  '--test-reporter-destination=stdout',
  '--test-reporter=tap',
  '--test-reporter-destination=' + join(root, `.data/test-${group}.tap`),
];
if (group !== 'unit') args.push('--test-concurrency=1');
const child = spawn(process.execPath, [...args, ...files.map((f) => relative(root, f))], {
  cwd: root,
  stdio: 'inherit',
});
const code: number = await new Promise((resolve) => child.on('exit', (c) => resolve(c ?? 1)));

const { readFileSync } = await import('node:fs');
const tap = readFileSync(join(root, `.data/test-${group}.tap`), 'utf8');
const count = (name: string) =>
  Number(
    /^# (\w+) (\d+)$/m.exec(
      tap
        .split('\n')
        .filter((l) => l.startsWith(`# ${name} `))
        .pop() ?? '',
    )?.[2] ?? 0,
  );
const passed = count('pass');
const failed = count('fail') + count('cancelled');
console.log(`${group}: ${passed} passed, ${failed} failed`);
appendFileSync(join(root, '.data/test-summary.txt'), `${group} ${passed} ${failed}\n`);
process.exit(code !== 0 || failed > 0 || passed === 0 ? 1 : 0);
