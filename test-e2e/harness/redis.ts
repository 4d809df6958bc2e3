// A private Redis server for one test file, so that a test can stop and restart it without
// touching the shared one deps.sh runs. redis-server comes from deps.sh's install.
import { spawn, type ChildProcess } from 'node:child_process';
import { createConnection } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

const READY_TIMEOUT_MS = 10_000;

export interface PrivateRedis {
  url: string;
  /** Stops the server at once (SIGKILL): every connection drops, nothing is saved. */
  kill(): Promise<void>;
  /** Starts it again on the same port, empty, and waits until it answers. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')));
  });
}

export async function startPrivateRedis(port: number): Promise<PrivateRedis> {
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();

  const start = async () => {
    const started = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    child = started;
    exited = new Promise((resolve) => started.once('close', () => resolve()));
    const deadline = Date.now() + READY_TIMEOUT_MS;
    while (!(await ping(port))) {
      if (started.exitCode !== null || Date.now() > deadline) {
        throw new Error(`redis-server on 127.0.0.1:${port} did not start (exit ${started.exitCode})`);
      }
      await sleep(50);
    }
  };

  const kill = async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };

  await start();
  return { url: `redis://127.0.0.1:${port}`, kill, start, stop: kill };
}
