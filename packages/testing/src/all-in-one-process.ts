import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { providerRegistry } from '@switchyard/rules';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const cli = join('packages', 'launcher', 'src', 'cli.ts');

/** The variables all-in-one seeds provider integrations from, as the provider registry names them. */
const providerVariables = new Set(
  providerRegistry.flatMap(({ env }) => [env.apiKey, env.baseUrl].filter((name) => name !== undefined)),
);

/** Variables of the developer's shell that would change what all-in-one does. */
const inheritedButIgnored = (name: string) =>
  /^(SWITCHYARD_|HTTPS?_PROXY$|PORT$|HOST$)/i.test(name) || providerVariables.has(name.toUpperCase());

export interface AllInOneProcess {
  child: ChildProcess;
  url: string;
  banner: string;
  field(label: string): string | undefined;
  required(label: string): string;
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }>;
}

/** Every all-in-one started and not yet exited (a suite's `after` stops what a failed test left). */
export const runningAllInOnes = new Set<ChildProcess>();

/** Starts `switchyard all-in-one` as an operator would, and waits for its welcome text. */
export async function startAllInOneProcess(
  dataDir: string,
  env: Record<string, string> = {},
): Promise<AllInOneProcess> {
  const childEnv: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !inheritedButIgnored(name)) childEnv[name] = value;
  }
  Object.assign(
    childEnv,
    { HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn', SWITCHYARD_DATA_DIR: dataDir },
    env,
  );
  const child = spawn(process.execPath, ['--import', 'tsx', cli, 'all-in-one'], {
    cwd: root,
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  runningAllInOnes.add(child);
  child.once('exit', () => runningAllInOnes.delete(child));
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));

  const banner = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no welcome text within 90 s:\n${stdout}\n${stderr}`)),
      90_000,
    );
    // The welcome text is one write that ends with an empty line.
    const check = () => {
      const start = stdout.indexOf('Switchyard is running');
      if (start >= 0 && stdout.endsWith('\n\n')) {
        clearTimeout(timer);
        resolve(stdout.slice(start));
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`all-in-one exited with ${code} before it was ready:\n${stdout}\n${stderr}`));
    });
  });
  const url = /running \(all-in-one\) at (http:\/\/\S+)/.exec(banner)?.[1];
  assert.ok(url, banner);
  const field = (label: string) => new RegExp(`^\\s*${label}:\\s+(\\S+)`, 'm').exec(banner)?.[1];
  return {
    child,
    url,
    banner,
    field,
    required: (label) => {
      const value = field(label);
      assert.ok(value, `no ${label} in:\n${banner}`);
      return value;
    },
    stop: async () => {
      const started = performance.now();
      const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
        child.once('exit', (code, signal) => resolve([code, signal])),
      );
      child.kill('SIGTERM');
      const [code, signal] = await exited;
      return { code, signal, ms: performance.now() - started };
    },
  };
}
