import { setTimeout as sleep } from 'node:timers/promises';

export { sleep };

/**
 * Re-runs `assertion` until it stops throwing, then returns its result; rethrows its last
 * error once `timeoutMs` has passed.
 */
export async function eventually<T>(
  assertion: () => T | Promise<T>,
  { timeoutMs = 5_000, intervalMs = 20 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await assertion();
    } catch (err) {
      if (Date.now() >= deadline) throw err;
      await sleep(intervalMs);
    }
  }
}

/** A promise with its resolve and reject exposed, for holding a fake dependency mid-call. */
export function deferred<T = void>(): {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (err: unknown) => void;
} {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Resolves with how long `promise` took to settle, in milliseconds. */
export async function timed<T>(promise: Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await promise;
  return { value, ms: performance.now() - started };
}
