import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Agent, request } from 'undici';
import { createServer } from 'node:http';
import { Cancellation } from './cancellation.ts';

describe('Cancellation', () => {
  test('an abort sets the reason and calls each listener once, in order', () => {
    const cancel = new Cancellation();
    const calls: string[] = [];
    const first = () => calls.push(`first ${String(cancel.reason)}`);
    cancel.signal.addEventListener('abort', first);
    cancel.signal.addEventListener('abort', first);
    cancel.signal.addEventListener('abort', () => calls.push('second'));
    assert.equal(cancel.aborted, false);
    cancel.abort('gone');
    cancel.abort('again');
    assert.equal(cancel.aborted, true);
    assert.equal(cancel.reason, 'gone');
    assert.deepEqual(calls, ['first gone', 'second']);
  });

  test('a removed listener, or one added after the abort, is not called', () => {
    const cancel = new Cancellation();
    let called = 0;
    const listener = () => called++;
    cancel.addEventListener('abort', listener);
    cancel.removeEventListener('abort', listener);
    cancel.abort();
    cancel.addEventListener('abort', listener);
    assert.equal(called, 0);
  });

  test('without a reason the reason is an AbortError, as AbortController gives', () => {
    const cancel = new Cancellation();
    cancel.abort();
    assert.ok(cancel.reason instanceof DOMException);
    assert.equal((cancel.reason as DOMException).name, 'AbortError');
  });

  test('a listener that throws does not keep the others from running; its error is thrown after them', () => {
    const cancel = new Cancellation();
    let later = false;
    cancel.addEventListener('abort', () => {
      throw new Error('listener failed');
    });
    cancel.addEventListener('abort', () => (later = true));
    assert.throws(() => cancel.abort(), /listener failed/);
    assert.equal(later, true);
    assert.equal(cancel.aborted, true);
  });

  test("undici's request() takes it as its signal: an abort ends the call with the reason", async () => {
    const server = createServer(() => {
      // Never answers: only the abort ends the call.
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const agent = new Agent();
    try {
      const cancel = new Cancellation();
      const call = request(`http://127.0.0.1:${port}/`, {
        dispatcher: agent,
        signal: cancel.signal as AbortSignal,
      });
      setTimeout(() => cancel.abort(new Error('client went away')), 20);
      await assert.rejects(call, /client went away/);
    } finally {
      await agent.destroy();
      server.closeAllConnections();
      server.close();
    }
  });
});
