import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { fromBinary } from '@bufbuild/protobuf';
import { ServiceUnavailable } from '@switchyard/core';
import { scopesForKind, type Principal } from '@switchyard/access';
import { Topics } from '@switchyard/adapters';
import { events, policy } from '@switchyard/proto';
import { eventually, type ServiceHarness } from '@switchyard/testing';
import { parseExposition, sampleSum } from '../metrics/exposition.ts';
import { costOf } from '../pricing/cost.ts';
import {
  startGatewayWithStandIns,
  startScriptedUpstream,
  type CheckAnswer,
  type PolicyStandIn,
  type ScriptedUpstream,
} from '../testing/policy-stand-ins.ts';

// Rate and usage limits through the gateway's HTTP interface: a stand-in policy service
// decides, a scripted OpenAI-format upstream answers, and the test sees what a client sees.

const DEFAULT_COMPLETION = 300;
const upstreamKey = 'sk-policy-upstream-0123456789';
const keys = new Map<string, Principal>();
const organisationId = randomUUID();
const workspaceId = randomUUID();

/** A new workspace key: each test has its own, so that what the gateway remembers of one does not touch another. */
function newKey(): { key: string; principal: Principal } {
  const key = `sy-policy-test-${randomUUID()}`;
  const principal: Principal = {
    apiKeyId: randomUUID(),
    organisationId,
    workspaceId,
    workspaceSlug: 'default',
    kind: 'workspace_service',
    scopes: [...scopesForKind('workspace_service')],
    expiresAt: null,
    userId: null,
    name: 'Policy test key',
    organisationCreatedAt: null,
  };
  keys.set(key, principal);
  return { key, principal };
}

let h: ServiceHarness;
let standIn: PolicyStandIn;
let gateway: Awaited<ReturnType<typeof startGatewayWithStandIns>> | undefined;
let upstream: ScriptedUpstream;

before(async () => {
  upstream = await startScriptedUpstream();
  gateway = await startGatewayWithStandIns(keys, {
    POLICY_DEFAULT_COMPLETION_TOKENS: String(DEFAULT_COMPLETION),
    POLICY_TIMEOUT_MS: '5000',
  });
  ({ h, standIn } = gateway);
});
after(async () => {
  await gateway?.close();
  await upstream?.close();
});

/** Headers choosing the scripted upstream inline, with the gateway key in x-vendor-api-key. */
function headersFor(key: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    'content-type': 'application/json',
    'x-vendor-api-key': key,
    authorization: `Bearer ${upstreamKey}`,
    'x-vendor-provider': 'openai',
    'x-vendor-custom-host': upstream.baseUrl,
    ...extra,
  };
}

const prompt = 'x'.repeat(40);
const body = (extra: Record<string, unknown> = {}) => ({
  model: 'gpt-4o',
  messages: [{ role: 'user', content: prompt }],
  ...extra,
});

function chat(key: string, json: unknown, extra: Record<string, string> = {}) {
  return h.request('POST', '/v1/chat/completions', { json, headers: headersFor(key, extra) });
}

const price = (promptTokens: number, completionTokens: number) =>
  costOf('openai', 'gpt-4o', { promptTokens, completionTokens, cachedTokens: 0, reasoningTokens: 0 });

function checksOf(principal: Principal) {
  return standIn.checks.filter((c) => c.apiKeyId === principal.apiKeyId);
}

function finalAccrual(reservationId: string) {
  return eventually(() => standIn.accruals.find((a) => a.final && a.reservation?.id === reservationId), {
    what: `the settlement of ${reservationId}`,
  });
}

function requestLog(requestId: string) {
  return eventually(
    () =>
      h.bus
        .log(Topics.requestLogs)
        .map((m) => fromBinary(events.RequestLogEventSchema, m.value))
        .find((e) => e.id === requestId),
    { what: 'the request log event' },
  );
}

const future = (ms: number) => String(Date.now() + ms);

/** Policy denials of chat completions the gateway's metrics counted, for this reason. */
async function denials(reason: string): Promise<number> {
  const text = await h.metrics.registry.getSingleMetricAsString('switchyard_gateway_policy_denials_total');
  return sampleSum(parseExposition(text), 'switchyard_gateway_policy_denials_total', {
    route: '/v1/chat/completions',
    reason,
  });
}

const rateState = (init: Partial<policy.LimitState>) => ({
  policyId: 'pol-rate',
  kind: policy.PolicyKind.RATE_LIMIT,
  type: 'requests',
  limit: 10,
  remaining: 5,
  resetAtMs: future(30_000),
  failureMode: policy.FailureMode.OPEN,
  valueKey: 'api_key:test',
  windowMs: '0',
  ...init,
});

const usageState = (init: Partial<policy.LimitState>) => ({
  policyId: 'pol-usage',
  kind: policy.PolicyKind.USAGE_LIMIT,
  type: 'cost',
  limit: 10,
  remaining: 9,
  resetAtMs: '0',
  failureMode: policy.FailureMode.CLOSED,
  valueKey: 'api_key:test',
  windowMs: '0',
  ...init,
});

/**
 * An ALLOW holding the request's estimate under a requests, a tokens and a cost limit; their
 * counters expire in a minute, or never (`expiresAtMs` '0', a usage limit that never resets).
 */
function holding(id: string, expiresAtMs = future(60_000)) {
  return async (request: policy.CheckRequest): Promise<CheckAnswer> => ({
    decision: policy.Decision.ALLOW,
    limits: [usageState({ failureMode: policy.FailureMode.OPEN })],
    reservation: {
      id,
      holds: [
        {
          policyId: 'pol-rate',
          kind: policy.PolicyKind.RATE_LIMIT,
          type: 'requests',
          held: 1,
          expiresAtMs,
        },
        {
          policyId: 'pol-tokens',
          kind: policy.PolicyKind.USAGE_LIMIT,
          type: 'tokens',
          held: request.estimate!.tokens,
          expiresAtMs,
        },
        {
          policyId: 'pol-usage',
          kind: policy.PolicyKind.USAGE_LIMIT,
          type: 'cost',
          held: request.estimate!.cost,
          expiresAtMs,
        },
      ],
    },
  });
}

describe('the estimate sent with the policy check', () => {
  test('is the characters of the messages / 4 and max_completion_tokens or max_tokens, priced, with who asks', async () => {
    standIn.state.decide = async () => ({ decision: policy.Decision.ALLOW });
    const { key, principal } = newKey();
    const res = await chat(key, body({ max_tokens: 50 }));
    assert.equal(res.status, 200, res.text);
    const asked = checksOf(principal).at(-1)!;
    assert.equal(asked.estimate?.tokens, 10 + 50);
    assert.equal(asked.estimate?.cost, price(10, 50));
    assert.ok(asked.estimate!.cost > 0);
    assert.equal(asked.organisationId, organisationId);
    assert.equal(asked.workspaceId, workspaceId);
    assert.equal(asked.apiKeyId, principal.apiKeyId);
    assert.equal(asked.userId, '');
    assert.equal(asked.provider, 'openai');
    assert.equal(asked.model, 'gpt-4o');
    assert.equal(asked.target, 'llm');
    assert.equal(asked.requestId, res.headers.get('x-request-id'));

    await chat(key, body({ max_tokens: 50, max_completion_tokens: 20 }));
    assert.equal(checksOf(principal).at(-1)!.estimate?.tokens, 10 + 20);
  });

  test('takes POLICY_DEFAULT_COMPLETION_TOKENS for a request that names no output limit', async () => {
    standIn.state.decide = async () => ({ decision: policy.Decision.ALLOW });
    const { key, principal } = newKey();
    const res = await chat(
      key,
      body({
        messages: [
          { role: 'system', content: 'abc' },
          { role: 'user', content: prompt },
        ],
      }),
    );
    assert.equal(res.status, 200, res.text);
    const asked = checksOf(principal).at(-1)!;
    assert.equal(asked.estimate?.tokens, Math.ceil(43 / 4) + DEFAULT_COMPLETION);
    assert.equal(asked.estimate?.cost, price(Math.ceil(43 / 4), DEFAULT_COMPLETION));
  });
});

describe('a request a limit denies', () => {
  test('is a 429 in the one error shape with retry-after, x-ratelimit headers and the policy named', async () => {
    standIn.state.decide = async () => ({
      decision: policy.Decision.DENY,
      code: 'rate_limit_exceeded',
      message:
        'Rate limit of policy "Burst" (pol-rate) reached for api_key:test: 10 requests per minute; resets in 17 s.',
      retryAfterSeconds: 17,
      policyId: 'pol-rate',
      limits: [rateState({ remaining: 0, resetAtMs: future(17_000) })],
    });
    const { key } = newKey();
    const res = await chat(key, body());
    assert.equal(res.status, 429);
    assert.deepEqual(res.body, {
      error: {
        message:
          'Rate limit of policy "Burst" (pol-rate) reached for api_key:test: 10 requests per minute; resets in 17 s.',
        type: 'rate_limit_error',
        param: null,
        code: 'rate_limit_exceeded',
      },
    });
    assert.equal(res.headers.get('retry-after'), '17');
    assert.equal(res.headers.get('x-vendor-policy-id'), 'pol-rate');
    assert.equal(res.headers.get('x-ratelimit-limit-requests'), '10');
    assert.equal(res.headers.get('x-ratelimit-remaining-requests'), '0');
    assert.match(res.headers.get('x-ratelimit-reset-requests')!, /^1[67]s$/);
    assert.equal(res.headers.get('x-ratelimit-limit-tokens'), null);
    assert.equal(upstream.requests.length, upstream.requests.length, 'no upstream call is counted here');

    const log = await requestLog(res.headers.get('x-request-id')!);
    assert.equal(log.status, 429);
    assert.equal(log.policy?.decision, 'denied');
    assert.equal(log.policy?.policyId, 'pol-rate');
    assert.equal(log.policy?.code, 'rate_limit_exceeded');
  });

  test('the official openai SDK raises RateLimitError for it', async () => {
    standIn.state.decide = async () => ({
      decision: policy.Decision.DENY,
      code: 'rate_limit_exceeded',
      message: 'Rate limit of policy "Burst" (pol-rate) reached.',
      retryAfterSeconds: 17,
      policyId: 'pol-rate',
      limits: [rateState({ remaining: 0 })],
    });
    const { key } = newKey();
    const client = new OpenAI({
      apiKey: key,
      baseURL: `${h.url}/v1`,
      maxRetries: 0,
      defaultHeaders: { 'x-vendor-provider': 'mock' },
    });
    await assert.rejects(
      client.chat.completions.create({ model: 'mock-1', messages: [{ role: 'user', content: 'hi' }] }),
      (err: unknown) => {
        assert.ok(err instanceof OpenAI.RateLimitError, String(err));
        assert.equal(err.status, 429);
        assert.equal(err.code, 'rate_limit_exceeded');
        return true;
      },
    );
  });

  test('a cumulative usage limit answers without retry-after, and the SDK does not retry it', async () => {
    standIn.state.decide = async () => ({
      decision: policy.Decision.DENY,
      code: 'usage_limit_exceeded',
      message:
        'Usage limit of policy "Budget" (pol-usage) reached for api_key:test: 10 USD; it never resets.',
      retryAfterSeconds: 0,
      policyId: 'pol-usage',
      limits: [usageState({ remaining: 0 })],
    });
    const { key, principal } = newKey();
    const counted = await denials('budget');
    const res = await chat(key, body());
    assert.equal(res.status, 429);
    assert.equal(res.body.error.code, 'usage_limit_exceeded');
    assert.equal(await denials('budget'), counted + 1, 'a usage limit of cost is counted as a budget');
    assert.equal(res.headers.get('retry-after'), null);
    assert.equal(res.headers.get('x-vendor-policy-id'), 'pol-usage');
    assert.equal(res.headers.get('x-ratelimit-limit-requests'), null, 'a usage limit is no rate limit');

    const before = checksOf(principal).length;
    // Default retries: a 429 that says not to retry is raised at once.
    const client = new OpenAI({
      apiKey: key,
      baseURL: `${h.url}/v1`,
      defaultHeaders: { 'x-vendor-provider': 'mock' },
    });
    await assert.rejects(
      client.chat.completions.create({ model: 'mock-1', messages: [{ role: 'user', content: 'hi' }] }),
      OpenAI.RateLimitError,
    );
    assert.equal(checksOf(principal).length, before + 1);
  });
});

describe('an admitted request', () => {
  test('under rate limits carries the x-ratelimit headers of the tightest limit of each type', async () => {
    standIn.state.decide = async () => ({
      decision: policy.Decision.ALLOW,
      limits: [
        rateState({
          policyId: 'pol-tpm',
          type: 'tokens',
          limit: 1000,
          remaining: 400,
          resetAtMs: future(360_000),
        }),
        rateState({
          policyId: 'pol-tpd',
          type: 'tokens',
          limit: 100_000,
          remaining: 50_000,
          resetAtMs: future(3_600_000),
        }),
        rateState({
          policyId: 'pol-rpm',
          type: 'requests',
          limit: 100,
          remaining: 99,
          resetAtMs: future(30_000),
        }),
        usageState({}),
      ],
    });
    const { key } = newKey();
    const res = await chat(key, body());
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get('x-ratelimit-limit-tokens'), '1000');
    assert.equal(res.headers.get('x-ratelimit-remaining-tokens'), '400');
    assert.match(res.headers.get('x-ratelimit-reset-tokens')!, /^(6m0s|5m59s)$/);
    assert.equal(res.headers.get('x-ratelimit-limit-requests'), '100');
    assert.equal(res.headers.get('x-ratelimit-remaining-requests'), '99');
    assert.match(res.headers.get('x-ratelimit-reset-requests')!, /^(30s|29s)$/);
  });

  test('without rate limits carries none, and the log says what its holds held and used', async () => {
    standIn.state.decide = holding('res-plain');
    const { key } = newKey();
    const res = await chat(key, body({ max_tokens: 50 }));
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get('x-ratelimit-limit-requests'), null);
    assert.equal(res.headers.get('x-ratelimit-limit-tokens'), null);
    const log = await requestLog(res.headers.get('x-request-id')!);
    assert.equal(log.policy?.decision, 'allowed');
    assert.deepEqual(
      log.policy?.adjustments.map(({ policyId, type, held, used }) => ({ policyId, type, held, used })),
      [
        { policyId: 'pol-rate', type: 'requests', held: 1, used: 1 },
        { policyId: 'pol-tokens', type: 'tokens', held: 60, used: 12 },
        { policyId: 'pol-usage', type: 'cost', held: price(10, 50), used: price(9, 3) },
      ],
    );
  });

  test('is settled after its answer with the usage the upstream reported, and its cost', async () => {
    standIn.state.decide = holding('res-json');
    const { key } = newKey();
    const res = await chat(key, body({ max_tokens: 50 }));
    assert.equal(res.status, 200, res.text);
    const settled = await finalAccrual('res-json');
    assert.equal(settled.used?.tokens, 12);
    assert.equal(settled.used?.cost, price(9, 3));
    assert.equal(settled.organisationId, organisationId);
    // The requests hold has nothing to settle: only the token and cost holds go.
    assert.deepEqual(settled.reservation?.holds.map((h) => h.type).sort(), ['cost', 'tokens']);
  });

  test('settlements of requests that finish together go to the policy service together, in one call', async () => {
    let n = 0;
    standIn.state.decide = async (request) => holding(`res-batch-${++n}`)(request);
    const { key } = newKey();
    const before = standIn.settleBatches.length;
    const answers = await Promise.all(Array.from({ length: 8 }, () => chat(key, body({ max_tokens: 50 }))));
    assert.ok(answers.every((res) => res.status === 200));
    for (let i = 1; i <= 8; i++) assert.equal((await finalAccrual(`res-batch-${i}`)).used?.tokens, 12);
    const batches = standIn.settleBatches.slice(before);
    assert.equal(
      batches.reduce((a, b) => a + b, 0),
      8,
    );
    assert.ok(batches.length < 8, `8 settlements took ${batches.length} calls`);
  });

  test('is settled also under a usage limit that never resets, whose counter never expires', async () => {
    standIn.state.decide = holding('res-forever', '0');
    const { key } = newKey();
    const res = await chat(key, body({ max_tokens: 50 }));
    assert.equal(res.status, 200, res.text);
    const settled = await finalAccrual('res-forever');
    assert.equal(settled.used?.tokens, 12);
    assert.equal(settled.used?.cost, price(9, 3));
  });

  test('no policy applies: the check is skipped, and the log says so', async () => {
    standIn.state.decide = async () => ({ decision: policy.Decision.ALLOW, skipChecksForMs: 10_000 });
    const { key, principal } = newKey();
    const first = await chat(key, body());
    const second = await chat(key, body());
    assert.equal(second.status, 200);
    assert.equal(checksOf(principal).length, 1);
    for (const res of [first, second]) {
      const log = await requestLog(res.headers.get('x-request-id')!);
      assert.equal(log.policy?.decision, 'skipped');
      assert.deepEqual(log.policy?.adjustments, []);
    }
  });

  test('an attempt that fails gives back what it held; the one that answers is settled to its usage', async () => {
    let n = 0;
    standIn.state.decide = async (request) => holding(`res-retry-${++n}`)(request);
    const { key, principal } = newKey();
    const config = {
      provider: 'openai',
      api_key: upstreamKey,
      custom_host: upstream.baseUrl,
      retry: { attempts: 1, on_status_codes: [500] },
    };
    const res = await h.request('POST', '/v1/chat/completions', {
      json: body({ model: 'fail-once-retry', max_tokens: 50 }),
      headers: {
        'content-type': 'application/json',
        'x-vendor-api-key': key,
        'x-vendor-config': JSON.stringify(config),
      },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(checksOf(principal).length, 2, 'each attempt is checked');
    const failed = await finalAccrual('res-retry-1');
    assert.deepEqual({ tokens: failed.used?.tokens, cost: failed.used?.cost }, { tokens: 0, cost: 0 });
    const answered = await finalAccrual('res-retry-2');
    assert.equal(answered.used?.tokens, 12);
  });
});

/** Reads a streamed answer as it arrives. */
async function openStream(key: string, json: unknown) {
  const response = await fetch(`${h.url}/v1/chat/completions`, {
    method: 'POST',
    headers: headersFor(key),
    body: JSON.stringify(json),
  });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let all = '';
  return {
    response,
    async next(): Promise<string | undefined> {
      const { value, done } = await reader.read();
      if (done) return undefined;
      const text = decoder.decode(value, { stream: true });
      all += text;
      return text;
    },
    async rest(): Promise<string> {
      while ((await this.next()) !== undefined);
      return all;
    },
  };
}

const dataOf = (text: string) =>
  text
    .split('\n\n')
    .filter((e) => e.startsWith('data: '))
    .map((e) => e.slice(6));

describe('a streamed answer', () => {
  test('is settled to the usage its last chunk reports', async () => {
    standIn.state.decide = holding('res-stream-usage');
    const { key } = newKey();
    const stream = await openStream(key, body({ stream: true, max_tokens: 100 }));
    const paced = await upstream.nextStream();
    paced.content('Hello ');
    paced.content('world');
    paced.usage({ prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 });
    paced.end();
    await stream.rest();
    const settled = await finalAccrual('res-stream-usage');
    assert.equal(settled.used?.tokens, 25);
    assert.equal(settled.used?.cost, price(20, 5));
  });

  test('without a usage chunk, is settled to the prompt estimate and its text / 4, at least 1 a chunk', async () => {
    standIn.state.decide = holding('res-stream-count');
    const { key } = newKey();
    const stream = await openStream(key, body({ stream: true, max_tokens: 100 }));
    const paced = await upstream.nextStream();
    paced.content('abcdefgh'); // 2
    paced.content('x'); // 1
    paced.content('123456789'); // 3
    paced.end();
    await stream.rest();
    const settled = await finalAccrual('res-stream-count');
    assert.equal(settled.used?.tokens, 10 + 6);
    assert.equal(settled.used?.cost, price(10, 6));
  });

  test('is charged while it runs and ended with an error event when its limit runs out, its upstream released', async () => {
    standIn.state.decide = holding('res-stream-limit');
    let asked = 0;
    standIn.state.accrue = async (request) => {
      if (request.final) return { allowed: true, reservation: request.reservation };
      asked += 1;
      if (asked === 1) {
        // More is granted: the tokens hold grows to 20.
        const holds = request.reservation!.holds.map((h) => (h.type === 'tokens' ? { ...h, held: 20 } : h));
        return { allowed: true, reservation: { id: request.reservation!.id, holds } };
      }
      return {
        allowed: false,
        policyId: 'pol-tokens',
        code: 'usage_limit_exceeded',
        message:
          'Usage limit of policy "Tokens" (pol-tokens) reached for api_key:test: 20 tokens; resets monthly.',
        reservation: request.reservation,
      };
    };
    const { key } = newKey();
    const counted = await denials('usage_limit');
    // Holds 10 (prompt) + 2 tokens.
    const stream = await openStream(key, body({ stream: true, max_tokens: 2 }));
    const paced = await upstream.nextStream();
    paced.content('aaaa'); // 11 in all: within what is held
    const first = await stream.next();
    assert.ok(first?.includes('aaaa'), 'the first chunk arrives before the upstream sends another');
    paced.content('bbbbbbbb'); // 13: more than held, so more is asked for, and granted
    let seen = '';
    while (!seen.includes('bbbbbbbb')) seen += (await stream.next()) ?? assert.fail('the stream ended early');
    assert.equal(asked, 1);
    paced.content('c'.repeat(32)); // 21: more than the 20 now held, and the limit has none left
    const rest = await stream.rest();
    await paced.closed;
    assert.ok(paced.hungUp, 'the upstream connection was closed');
    assert.equal(asked, 2);
    assert.ok(!rest.includes('cccc'), 'the chunk over the limit is not passed on');
    const data = dataOf(rest);
    assert.equal(data.at(-1), '[DONE]');
    assert.deepEqual(JSON.parse(data.at(-2)!), {
      error: {
        message:
          'Usage limit of policy "Tokens" (pol-tokens) reached for api_key:test: 20 tokens; resets monthly.',
        type: 'rate_limit_error',
        param: null,
        code: 'usage_limit_exceeded',
      },
    });
    const settled = await finalAccrual('res-stream-limit');
    assert.equal(settled.used?.tokens, 21);
    const log = await requestLog(stream.response.headers.get('x-request-id')!);
    assert.equal(log.policy?.decision, 'exhausted');
    assert.equal(log.policy?.policyId, 'pol-tokens');
    assert.equal(log.policy?.code, 'usage_limit_exceeded');
    const tokens = log.policy?.adjustments.find((a) => a.type === 'tokens');
    assert.deepEqual({ held: tokens?.held, used: tokens?.used }, { held: 20, used: 21 });
    assert.equal(await denials('usage_limit'), counted + 1, 'the stream its limit ended is counted');
  });

  test('ended by its limit, the official SDK sees the error and no more content', async () => {
    standIn.state.decide = holding('res-stream-sdk');
    standIn.state.accrue = async (request) =>
      request.final
        ? { allowed: true }
        : {
            allowed: false,
            policyId: 'pol-tokens',
            code: 'usage_limit_exceeded',
            message: 'Usage limit of policy "Tokens" (pol-tokens) reached.',
          };
    const { key } = newKey();
    const client = new OpenAI({
      apiKey: upstreamKey,
      baseURL: `${h.url}/v1`,
      maxRetries: 0,
      defaultHeaders: headersFor(key),
    });
    const pacing = upstream.nextStream().then((paced) => {
      paced.content('a'.repeat(200));
    });
    const stream = (await client.chat.completions.create({
      ...body({ max_tokens: 1 }),
      stream: true,
    } as never)) as unknown as AsyncIterable<unknown>;
    await pacing;
    await assert.rejects(async () => {
      for await (const chunk of stream) void chunk;
    }, /Usage limit of policy "Tokens" \(pol-tokens\) reached/);
  });
});

describe('when the policy service cannot answer', () => {
  const down = async (): Promise<CheckAnswer> => {
    throw new ServiceUnavailable('policy service is down');
  };

  test('a key under a limit that fails closed is refused with 503', async () => {
    standIn.state.decide = async () => ({
      decision: policy.Decision.ALLOW,
      limits: [usageState({ policyId: 'pol-closed', failureMode: policy.FailureMode.CLOSED })],
    });
    const { key } = newKey();
    assert.equal((await chat(key, body())).status, 200);
    standIn.state.decide = down;
    const counted = await denials('policy_unavailable');
    const res = await chat(key, body());
    assert.equal(res.status, 503);
    assert.equal(res.body.error.code, 'policy_unavailable');
    assert.equal(await denials('policy_unavailable'), counted + 1);
    assert.equal(res.body.error.type, 'service_unavailable_error');
    assert.equal(res.headers.get('x-vendor-policy-id'), 'pol-closed');
    const log = await requestLog(res.headers.get('x-request-id')!);
    assert.equal(log.policy?.decision, 'failed_closed');
    assert.equal(log.policy?.policyId, 'pol-closed');
  });

  test('a key under limits that fail open is counted here: exactly the rate limit per window is admitted', async () => {
    // Not across a window boundary.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 55_000) await new Promise((resolve) => setTimeout(resolve, 60_500 - intoMinute));
    const windowEnd = Math.ceil((Date.now() + 1) / 60_000) * 60_000;
    standIn.state.decide = async () => ({
      decision: policy.Decision.ALLOW,
      limits: [
        rateState({ policyId: 'pol-rpm', limit: 3, remaining: 2, resetAtMs: String(windowEnd) }),
        usageState({ failureMode: policy.FailureMode.OPEN }),
      ],
    });
    const { key } = newKey();
    assert.equal((await chat(key, body())).status, 200);
    standIn.state.decide = down;
    const remaining: Array<string | null> = [];
    for (let i = 0; i < 3; i++) {
      const res = await chat(key, body());
      assert.equal(res.status, 200, res.text);
      remaining.push(res.headers.get('x-ratelimit-remaining-requests'));
      if (i === 0) {
        const log = await requestLog(res.headers.get('x-request-id')!);
        assert.equal(log.policy?.decision, 'failed_open');
      }
    }
    assert.deepEqual(remaining, ['2', '1', '0']);
    const refused = await chat(key, body());
    assert.equal(refused.status, 429);
    assert.equal(refused.body.error.code, 'rate_limit_exceeded');
    assert.equal(refused.headers.get('x-vendor-policy-id'), 'pol-rpm');
    assert.ok(Number(refused.headers.get('retry-after')) <= 60);

    // Back: the policy service decides again at once.
    standIn.state.decide = async () => ({ decision: policy.Decision.ALLOW });
    assert.equal((await chat(key, body())).status, 200);
  });

  test('a key never seen follows POLICY_FAIL_OPEN (default: let through)', async () => {
    standIn.state.decide = down;
    const { key } = newKey();
    const res = await chat(key, body());
    assert.equal(res.status, 200, res.text);
    const log = await requestLog(res.headers.get('x-request-id')!);
    assert.equal(log.policy?.decision, 'failed_open');
  });
});
