// One Switchyard service as its own child process, with its output captured to a file.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { join, resolve } from 'node:path';
import { repoRoot } from './deps.ts';

export const logDir = join(repoRoot, '.data', 'e2e-logs');
const cli = 'packages/launcher/src/cli.ts';
const TAIL_LINES = 60;

/** Every child started by this process, so an abrupt exit can still kill them. */
const running = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const child of running) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
}

/**
 * The services run from source through tsx, or, when SWITCHYARD_BUNDLE_DIR names a bundle
 * laid out like the image (scripts/bundle.sh), from that bundle: exactly what ships.
 */
export function cliCommand(args: string[]): { command: string; args: string[] } {
  const bundle = process.env.SWITCHYARD_BUNDLE_DIR;
  if (bundle)
    return {
      command: process.execPath,
      args: [join(resolve(repoRoot, bundle), 'dist', 'switchyard.mjs'), ...args],
    };
  return { command: process.execPath, args: ['--import', 'tsx', cli, ...args] };
}

export class ServiceProcess {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private lines: string[] = [];
  private partial = '';
  private log: WriteStream | undefined;
  private exitCode: number | null = null;
  private exitSignal: NodeJS.Signals | null = null;

  constructor(
    readonly name: string,
    private readonly args: string[],
    private readonly env: NodeJS.ProcessEnv,
    private readonly logFile = join(logDir, `${name}.log`),
  ) {}

  /** Settings for the next start over those it was made with (an empty value removes one). */
  setEnvironment(extra: Record<string, string>): void {
    for (const [name, value] of Object.entries(extra)) {
      if (value === '') delete this.env[name];
      else this.env[name] = value;
    }
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get isRunning(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** The last lines the child wrote to stdout or stderr. */
  tail(lines = TAIL_LINES): string {
    return [...this.lines, this.partial].filter(Boolean).slice(-lines).join('\n');
  }

  describeExit(): string {
    return this.exitSignal ? `signal ${this.exitSignal}` : `exit code ${this.exitCode}`;
  }

  start(): void {
    if (this.isRunning) throw new Error(`${this.name} is already running`);
    installExitHook();
    mkdirSync(logDir, { recursive: true });
    this.log = createWriteStream(this.logFile, { flags: 'a' });
    this.log.write(`----- ${new Date().toISOString()} starting ${this.name}\n`);
    this.lines = [];
    this.partial = '';
    const { command, args } = cliCommand(this.args);
    const child = spawn(command, args, { cwd: repoRoot, env: this.env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    running.add(child);
    const capture = (chunk: Buffer) => {
      this.log?.write(chunk);
      const text = this.partial + chunk.toString('utf8');
      const parts = text.split('\n');
      this.partial = parts.pop() ?? '';
      this.lines.push(...parts);
      if (this.lines.length > TAIL_LINES * 2) this.lines = this.lines.slice(-TAIL_LINES);
    };
    child.stdout!.on('data', capture);
    child.stderr!.on('data', capture);
    this.exited = new Promise<void>((resolve) => {
      child.once('error', (err) => {
        this.lines.push(`spawn failed: ${err.message}`);
        running.delete(child);
        resolve();
      });
      child.once('close', (code, signal) => {
        this.exitCode = code;
        this.exitSignal = signal;
        running.delete(child);
        const log = this.log;
        this.log = undefined;
        log?.end(`----- ${new Date().toISOString()} ${this.name} exited (${this.describeExit()})\n`);
        resolve();
      });
    });
  }

  /** Resolves when the child exits, with its exit code (null after a signal). */
  async waitForExit(timeoutMs: number): Promise<number | null> {
    let timer: NodeJS.Timeout | undefined;
    const finished = await Promise.race([
      this.exited.then(() => true),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (!finished) throw new Error(`${this.name} did not exit within ${timeoutMs} ms.\n${this.tail()}`);
    return this.exitCode;
  }

  /** SIGKILL: the process dies at once, as in a crash. */
  async kill(): Promise<void> {
    if (this.child && this.isRunning) this.child.kill('SIGKILL');
    await this.exited;
  }

  /** SIGTERM, then SIGKILL if the child is still there after graceMs. */
  async stop(graceMs = 15_000): Promise<void> {
    const child = this.child;
    if (!child || !this.isRunning) {
      await this.exited;
      return;
    }
    child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const stopped = await Promise.race([
      this.exited.then(() => true),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), graceMs);
      }),
    ]);
    clearTimeout(timer);
    if (!stopped) {
      this.lines.push(`(${this.name} ignored SIGTERM for ${graceMs} ms; sending SIGKILL)`);
      child.kill('SIGKILL');
      await this.exited;
    }
  }
}

/** Runs a CLI command to completion; throws with its output unless it exits 0. */
export async function runCli(
  name: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<void> {
  const command = new ServiceProcess(name, args, env);
  command.start();
  let code: number | null;
  try {
    code = await command.waitForExit(timeoutMs);
  } catch (err) {
    await command.stop(1_000);
    throw err;
  }
  if (code !== 0)
    throw new Error(
      `\`switchyard ${args.join(' ')}\` failed (${command.describeExit()}):\n${command.tail()}`,
    );
}
