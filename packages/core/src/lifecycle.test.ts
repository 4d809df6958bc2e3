import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Lifecycle } from './lifecycle.ts';
import { captureLogger, settleLogs } from './testing/logger.ts';
import { timed } from './testing/wait.ts';

describe('Lifecycle', () => {
  test('runs closers in reverse registration order', async () => {
    const order: string[] = [];
    const lifecycle = new Lifecycle(captureLogger().logger, 1_000);
    lifecycle.onStop('database', async () => {
      order.push('database');
    });
    lifecycle.onStop('kafka', () => {
      order.push('kafka');
    });
    lifecycle.onStop('http server', async () => {
      order.push('http server');
    });
    await lifecycle.stop('test');
    assert.deepEqual(order, ['http server', 'kafka', 'database']);
  });

  test('a failing or stuck step is logged and does not hold back the others', async () => {
    const log = captureLogger();
    const order: string[] = [];
    const lifecycle = new Lifecycle(log.logger, 100);
    lifecycle.onStop('pool', () => {
      order.push('pool');
    });
    lifecycle.onStop('stuck', () => new Promise<void>(() => {}));
    lifecycle.onStop('broken', () => {
      throw new Error('already closed');
    });
    const { ms } = await timed(lifecycle.stop('test'));
    assert.deepEqual(order, ['pool']);
    assert.ok(ms >= 90 && ms < 1_000, `stopped after ${Math.round(ms)} ms, bounded by the grace period`);
    await settleLogs();
    const failures = log.lines().filter((l) => l.message === 'shutdown step failed');
    assert.deepEqual(
      failures.map((l) => [l.step, l.error]),
      [
        ['broken', 'Error: already closed'],
        ['stuck', 'Error: timed out'],
      ],
    );
  });

  test('stop() runs once however often it is called, and reports stopping', async () => {
    let calls = 0;
    const lifecycle = new Lifecycle(captureLogger().logger, 1_000);
    lifecycle.onStop('x', () => {
      calls++;
    });
    assert.equal(lifecycle.isStopping, false);
    const a = lifecycle.stop('SIGTERM');
    const b = lifecycle.stop('SIGINT');
    assert.equal(lifecycle.isStopping, true);
    assert.equal(a, b);
    await a;
    await lifecycle.stop('again');
    assert.equal(calls, 1);
  });
});
