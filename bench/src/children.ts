import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

/** A child process whose output is read line by line (bounded) and whose exit is awaited. */
export class Child {
  readonly process: ChildProcess;
  readonly exited: Promise<number | null>;
  /** The first lines of standard output (bounded); later lines are read and discarded. */
  readonly stdoutLines: string[] = [];
  /** The last lines of standard error, for error messages. */
  readonly stderrTail: string[] = [];
  private exitCode: number | null | undefined;
  private readonly waiters = new Set<() => void>();

  constructor(
    readonly name: string,
    args: string[],
    options: { cwd: string; env: NodeJS.ProcessEnv },
  ) {
    this.process = spawn(process.execPath, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.exited = new Promise((resolve) => {
      this.process.once('exit', (code) => {
        this.exitCode = code;
        this.notify();
        resolve(code);
      });
      this.process.once('error', () => {
        this.exitCode = null;
        this.notify();
        resolve(null);
      });
    });
    readLines(this.process.stdout!, (line) => {
      if (this.stdoutLines.length < 500) this.stdoutLines.push(line);
      this.notify();
    });
    readLines(this.process.stderr!, (line) => {
      this.stderrTail.push(line);
      if (this.stderrTail.length > 40) this.stderrTail.shift();
    });
  }

  get pid(): number {
    return this.process.pid ?? 0;
  }

  get running(): boolean {
    return this.exitCode === undefined;
  }

  /** Waits until `pick` finds something in the output, the child exits, or the time is up. */
  async waitForOutput<T>(pick: (lines: string[]) => T | undefined, timeoutMs: number): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = pick(this.stdoutLines);
      if (found !== undefined) return found;
      if (!this.running)
        throw new Error(`${this.name} exited (code ${this.exitCode}) before it was ready${this.tail()}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`${this.name} was not ready within ${timeoutMs} ms${this.tail()}`);
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.waiters.delete(done);
          resolve();
        };
        const timer = setTimeout(done, Math.min(left, 250));
        this.waiters.add(done);
      });
    }
  }

  /**
   * Waits for the JSON line the benchmark's own servers print once they listen: an object
   * with their `url`, and with other addresses beside it.
   */
  waitForListening(timeoutMs: number): Promise<Record<string, unknown> & { url: string }> {
    return this.waitForOutput((lines) => {
      for (const line of lines) {
        if (!line.startsWith('{')) continue;
        const parsed = JSON.parse(line) as Record<string, unknown>;
        if (typeof parsed.url === 'string') return parsed as Record<string, unknown> & { url: string };
      }
      return undefined;
    }, timeoutMs);
  }

  /** SIGTERM, then SIGKILL if it has not exited within the grace period. */
  async stop(graceMs: number): Promise<void> {
    if (!this.running) return;
    this.process.stdin?.end();
    this.process.kill('SIGTERM');
    const timedOut = await Promise.race([
      this.exited.then(() => false),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(true), graceMs).unref()),
    ]);
    if (timedOut && this.running) {
      this.process.kill('SIGKILL');
      await Promise.race([this.exited, new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
    }
  }

  private tail(): string {
    return this.stderrTail.length ? `:\n  ${this.stderrTail.slice(-15).join('\n  ')}` : '';
  }

  private notify(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}

function readLines(stream: NodeJS.ReadableStream, onLine: (line: string) => void): void {
  let pending = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    pending += chunk;
    let newline: number;
    while ((newline = pending.indexOf('\n')) >= 0) {
      onLine(pending.slice(0, newline).replace(/\r$/, ''));
      pending = pending.slice(newline + 1);
    }
    if (pending.length > 65_536) pending = pending.slice(-65_536);
  });
}

/** A port that is free on 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
