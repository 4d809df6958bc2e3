import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { AppError } from '@switchyard/core';
import { UpstreamError } from '@switchyard/core';
import { parseRoutingConfig } from '@switchyard/rules';
import { retryAfterMs, runRoutePlan, type AttemptContext, type RoutePlanOptions } from './route-plan.ts';

interface Result {
  status: number;
  from: string;
  headers?: Record<string, string>;
  discard?(): void;
}

/** Targets answer by name: a list of statuses consumed one per call (the last repeats). */
function scripted(script: Record<string, number[]>) {
  const calls: AttemptContext[] = [];
  const seen = new Map<string, number>();
  const attempt = async (ctx: AttemptContext): Promise<Result> => {
    calls.push(ctx);
    const name = ctx.leaf.provider ?? '(request)';
    const n = seen.get(name) ?? 0;
    seen.set(name, n + 1);
    const statuses = script[name] ?? [200];
    const status = statuses[Math.min(n, statuses.length - 1)]!;
    if (status >= 400) throw new UpstreamError(status, `${name} failed`);
    return { status, from: name };
  };
  return { calls, attempt, names: () => calls.map((c) => c.leaf.provider) };
}

function options(overrides: Partial<RoutePlanOptions> = {}): RoutePlanOptions & { waits: number[] } {
  const waits: number[] = [];
  return {
    subject: { metadata: {}, params: {} },
    signal: new AbortController().signal,
    defaultTimeoutMs: 5_000,
    random: () => 0.5,
    sleep: async (ms) => {
      waits.push(ms);
    },
    ...overrides,
    waits,
  };
}

const config = (value: unknown) => parseRoutingConfig(value);

describe('route plan', () => {
  test('without a config the request makes one attempt with its own provider choice', async () => {
    const s = scripted({});
    const out = await runRoutePlan(undefined, options(), s.attempt);
    assert.equal(out.value.from, '(request)');
    assert.equal(out.path, 'config');
    assert.equal(out.retries, 0);
    assert.equal(s.calls.length, 1);
  });

  test('fallback moves down the targets until one answers, and names it', async () => {
    const s = scripted({ a: [500], b: [429], c: [200] });
    const out = await runRoutePlan(
      config({
        strategy: { mode: 'fallback' },
        targets: [{ provider: 'a' }, { provider: 'b' }, { provider: 'c' }],
      }),
      options(),
      s.attempt,
    );
    assert.equal(out.value.from, 'c');
    assert.equal(out.path, 'config.targets[2]');
    assert.deepEqual(s.names(), ['a', 'b', 'c']);
  });

  test('tells of each retry made and each fallback to a next target, as it happens', async () => {
    const s = scripted({ a: [503, 503, 503], b: [500], c: [200] });
    const told: string[] = [];
    const out = await runRoutePlan(
      config({
        strategy: { mode: 'fallback' },
        targets: [{ provider: 'a', retry: { attempts: 2 } }, { provider: 'b' }, { provider: 'c' }],
      }),
      options({
        retrying: () => told.push(`retry after ${s.names().at(-1)}`),
        fallingBack: () => told.push(`fallback after ${s.names().at(-1)}`),
      }),
      s.attempt,
    );
    assert.equal(out.value.from, 'c');
    assert.deepEqual(told, ['retry after a', 'retry after a', 'fallback after a', 'fallback after b']);
  });

  test('fallback on listed status codes only: another failure is answered as it is', async () => {
    const s = scripted({ a: [400], b: [200] });
    await assert.rejects(
      runRoutePlan(
        config({
          strategy: { mode: 'fallback', on_status_codes: [429, 503] },
          targets: [{ provider: 'a' }, { provider: 'b' }],
        }),
        options(),
        s.attempt,
      ),
      (err: AppError) => err.status === 400,
    );
    assert.deepEqual(s.names(), ['a']);
  });

  test('when every target fails the last failure is the answer', async () => {
    const s = scripted({ a: [500], b: [502] });
    const settled: string[] = [];
    await assert.rejects(
      runRoutePlan(
        config({ strategy: { mode: 'fallback' }, targets: [{ provider: 'a' }, { provider: 'b' }] }),
        options({ settled: (path) => settled.push(path) }),
        s.attempt,
      ),
      (err: AppError) => err.status === 502,
    );
    assert.deepEqual(settled, ['config.targets[1]']);
  });

  test('a failed answer that is not used is released before the next target is tried', async () => {
    let discarded = 0;
    const out = await runRoutePlan(
      config({ strategy: { mode: 'fallback' }, targets: [{ provider: 'a' }, { provider: 'b' }] }),
      options(),
      async (ctx): Promise<Result> =>
        ctx.leaf.provider === 'a'
          ? { status: 503, from: 'a', discard: () => (discarded += 1) }
          : { status: 200, from: 'b' },
    );
    assert.equal(out.value.from, 'b');
    assert.equal(discarded, 1);
  });

  test('a forwarded failure (an answer, not an error) is returned when nothing else is left', async () => {
    const out = await runRoutePlan(config({ provider: 'a' }), options(), async () => ({
      status: 404,
      from: 'a',
    }));
    assert.equal(out.value.status, 404);
  });

  test('retries with exponential backoff on retryable statuses, then answers with the retry count', async () => {
    const s = scripted({ a: [503, 503, 200] });
    const o = options();
    const out = await runRoutePlan(config({ provider: 'a', retry: { attempts: 3 } }), o, s.attempt);
    assert.equal(out.value.from, 'a');
    assert.equal(out.retries, 2);
    assert.deepEqual(
      s.calls.map((c) => c.retry),
      [0, 1, 2],
    );
    // 200 ms then 400 ms (random 0.5 → no jitter).
    assert.deepEqual(o.waits, [200, 400]);
  });

  test('gives up after the allowed attempts', async () => {
    const s = scripted({ a: [503] });
    await assert.rejects(
      runRoutePlan(config({ provider: 'a', retry: { attempts: 2 } }), options(), s.attempt),
    );
    assert.equal(s.calls.length, 3);
  });

  test('a status outside retry.on_status_codes is not retried', async () => {
    const s = scripted({ a: [500, 200] });
    await assert.rejects(
      runRoutePlan(
        config({ provider: 'a', retry: { attempts: 3, on_status_codes: [429] } }),
        options(),
        s.attempt,
      ),
    );
    assert.equal(s.calls.length, 1);
  });

  test("honours the provider's retry-after, in seconds or as a date", async () => {
    const o = options();
    let n = 0;
    const out = await runRoutePlan(config({ provider: 'a', retry: { attempts: 2 } }), o, async () => {
      n += 1;
      if (n === 1) throw new UpstreamError(429, 'slow down', { headers: { 'retry-after': '3' } });
      if (n === 2)
        return {
          status: 429,
          from: 'a',
          headers: { 'retry-after': new Date(Date.now() + 5_000).toUTCString() },
        };
      return { status: 200, from: 'a' };
    });
    assert.equal(out.retries, 2);
    assert.equal(o.waits[0], 3_000);
    assert.ok(o.waits[1]! > 3_000 && o.waits[1]! <= 5_000, String(o.waits[1]));
  });

  test('a retry-after beyond 30 s is not waited for: the 429 goes to the client', async () => {
    const o = options();
    await assert.rejects(
      runRoutePlan(config({ provider: 'a', retry: { attempts: 2 } }), o, async () => {
        throw new UpstreamError(429, 'come back later', { headers: { 'retry-after': '120' } });
      }),
      (err: AppError) => err.status === 429 && err.headers['retry-after'] === '120',
    );
    assert.deepEqual(o.waits, []);
  });

  test('use_retry_after_headers false keeps to the backoff', async () => {
    const o = options();
    const s = scripted({ a: [429, 200] });
    await runRoutePlan(
      config({ provider: 'a', retry: { attempts: 1, use_retry_after_headers: false } }),
      o,
      async (ctx) => {
        try {
          return await s.attempt(ctx);
        } catch (err) {
          (err as AppError).headers['retry-after'] = '9';
          throw err;
        }
      },
    );
    assert.deepEqual(o.waits, [200]);
  });

  test('load balancing picks by weight and never a zero-weight target', async () => {
    const plan = config({
      strategy: { mode: 'loadbalance' },
      targets: [
        { provider: 'a', weight: 1 },
        { provider: 'z', weight: 0 },
        { provider: 'b', weight: 3 },
      ],
    });
    const picks: string[] = [];
    for (const r of [0, 0.2, 0.25, 0.5, 0.99, 0.9999999]) {
      const out = await runRoutePlan(plan, options({ random: () => r }), async (ctx): Promise<Result> => ({
        status: 200,
        from: ctx.leaf.provider!,
      }));
      picks.push(out.value.from);
    }
    assert.deepEqual(picks, ['a', 'a', 'b', 'b', 'b', 'b']);
  });

  test('load balancing spreads traffic in proportion to the weights', async () => {
    const plan = config({
      strategy: { mode: 'loadbalance' },
      targets: [
        { provider: 'a', weight: 0.25 },
        { provider: 'b', weight: 0.75 },
      ],
    });
    const counts = { a: 0, b: 0 } as Record<string, number>;
    for (let i = 0; i < 4000; i += 1) {
      const out = await runRoutePlan(
        plan,
        options({ random: Math.random }),
        async (ctx): Promise<Result> => ({
          status: 200,
          from: ctx.leaf.provider!,
        }),
      );
      counts[out.value.from]! += 1;
    }
    assert.ok(counts.a! > 800 && counts.a! < 1200, JSON.stringify(counts));
  });

  test('conditional routing on metadata and params, with a default', async () => {
    const plan = config({
      strategy: {
        mode: 'conditional',
        conditions: [
          { query: { 'metadata.plan': { $eq: 'paid' } }, then: 'premium' },
          {
            query: { $or: [{ 'params.max_tokens': { $gt: 1000 } }, { 'params.model': 'big' }] },
            then: 'large',
          },
        ],
        default: 'basic',
      },
      targets: [
        { name: 'basic', provider: 'b' },
        { name: 'premium', provider: 'p' },
        { name: 'large', provider: 'l' },
      ],
    });
    const route = async (metadata: Record<string, string>, params: Record<string, unknown>) =>
      (
        await runRoutePlan(
          plan,
          options({ subject: { metadata, params } }),
          async (ctx): Promise<Result> => ({
            status: 200,
            from: ctx.leaf.provider!,
          }),
        )
      ).value.from;
    assert.equal(await route({ plan: 'paid' }, {}), 'p');
    assert.equal(await route({ plan: 'free' }, { max_tokens: 2000 }), 'l');
    assert.equal(await route({}, { model: 'big' }), 'l');
    assert.equal(await route({}, { max_tokens: 10 }), 'b');
  });

  test('conditional routing with no match and no default is a 400 naming the conditions', async () => {
    const plan = config({
      strategy: { mode: 'conditional', conditions: [{ query: { 'metadata.x': 'y' }, then: 't' }] },
      targets: [{ name: 't', provider: 't' }],
    });
    await assert.rejects(
      runRoutePlan(plan, options(), async (): Promise<Result> => ({ status: 200, from: 't' })),
      (err: AppError) => err.status === 400 && err.param === 'config.strategy.conditions',
    );
  });

  test('nested targets: a load-balanced branch whose chosen member falls back', async () => {
    const s = scripted({ a1: [503], a2: [200] });
    const out = await runRoutePlan(
      config({
        strategy: { mode: 'loadbalance' },
        targets: [
          { weight: 1, strategy: { mode: 'fallback' }, targets: [{ provider: 'a1' }, { provider: 'a2' }] },
          { weight: 0, provider: 'b' },
        ],
      }),
      options(),
      s.attempt,
    );
    assert.equal(out.path, 'config.targets[0].targets[1]');
    assert.deepEqual(s.names(), ['a1', 'a2']);
  });

  test('settings are inherited down the tree, the nearest winning; override_params merge', async () => {
    const s = scripted({});
    await runRoutePlan(
      config({
        request_timeout: 1_000,
        retry: { attempts: 1 },
        override_params: { temperature: 0.1, max_tokens: 5 },
        strategy: { mode: 'fallback' },
        targets: [{ provider: 'a', request_timeout: 2_000, override_params: { max_tokens: 9 } }],
      }),
      options(),
      s.attempt,
    );
    const ctx = s.calls[0]!;
    assert.equal(ctx.timeoutMs, 2_000);
    assert.deepEqual(ctx.overrideParams, { temperature: 0.1, max_tokens: 9 });
  });

  test('an attempt past its deadline is a 408 and the fallback target answers', async () => {
    const out = await runRoutePlan(
      config({
        strategy: { mode: 'fallback' },
        targets: [{ provider: 'slow', request_timeout: 30 }, { provider: 'fast' }],
      }),
      options(),
      (ctx) =>
        ctx.leaf.provider === 'slow'
          ? new Promise<Result>((_resolve, reject) =>
              ctx.signal.addEventListener('abort', () => reject(new Error('aborted'))),
            )
          : Promise.resolve({ status: 200, from: 'fast' }),
    );
    assert.equal(out.value.from, 'fast');
  });

  test('a lone attempt past its deadline answers 408', async () => {
    await assert.rejects(
      runRoutePlan(
        config({ provider: 'slow', request_timeout: 20 }),
        options(),
        (ctx) =>
          new Promise<Result>((_resolve, reject) =>
            ctx.signal.addEventListener('abort', () => reject(new Error('x'))),
          ),
      ),
      (err: AppError) => err.status === 408,
    );
  });

  test('once the client has gone nothing more is tried', async () => {
    const client = new AbortController();
    let calls = 0;
    await assert.rejects(
      runRoutePlan(
        config({
          strategy: { mode: 'fallback' },
          targets: [{ provider: 'a', retry: { attempts: 3 } }, { provider: 'b' }],
        }),
        options({ signal: client.signal }),
        async () => {
          calls += 1;
          client.abort();
          throw new UpstreamError(503, 'down');
        },
      ),
    );
    assert.equal(calls, 1);
  });

  test('a programming error is not swallowed by fallback', async () => {
    await assert.rejects(
      runRoutePlan(
        config({ strategy: { mode: 'fallback' }, targets: [{ provider: 'a' }, { provider: 'b' }] }),
        options(),
        async () => {
          throw new TypeError('bug');
        },
      ),
      TypeError,
    );
  });
});

describe('retry-after', () => {
  test('reads seconds and HTTP dates; ignores what it cannot read', () => {
    assert.equal(retryAfterMs('2'), 2_000);
    assert.equal(retryAfterMs('0.5'), 500);
    assert.equal(retryAfterMs(undefined), undefined);
    assert.equal(retryAfterMs('soon'), undefined);
    assert.equal(retryAfterMs('-1'), undefined);
    const inTen = retryAfterMs(new Date(Date.now() + 10_000).toUTCString())!;
    assert.ok(inTen > 8_000 && inTen <= 10_000);
    assert.equal(retryAfterMs(new Date(Date.now() - 10_000).toUTCString()), 0);
  });
});
