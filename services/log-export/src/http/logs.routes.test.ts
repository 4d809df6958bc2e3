import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { scopesForKind } from '@switchyard/access';
import { Topics, publishEvent } from '@switchyard/adapters';
import { events } from '@switchyard/proto';
import { controlPlane } from '@switchyard/control-plane';
import { keyMaterialOf, IdentityRepository } from '@switchyard/control-plane/testing';
import { eventually, startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { logExportService } from '../service.ts';

type RequestLogInit = MessageInitShape<typeof events.RequestLogEventSchema>;
type FeedbackInit = MessageInitShape<typeof events.FeedbackEventSchema>;

let h: ServiceHarness;
let otherWorkspaceId: string;
let otherWorkspaceKey: string;
let otherOrganisationId: string;
let otherOrganisationKey: string;

before(async () => {
  h = await startServiceHarness({ services: [controlPlane, logExportService] });
  const workspace = await h.request('POST', '/v2/workspaces', {
    key: h.adminKey,
    json: { name: 'Other team' },
  });
  otherWorkspaceId = workspace.body.id;
  const key = await h.request('POST', '/v2/api-keys/workspace/service', {
    key: h.adminKey,
    json: { name: 'Other team key', workspace_id: otherWorkspaceId },
  });
  otherWorkspaceKey = key.body.key;
  const repo = new IdentityRepository(h.db('control-plane').manager);
  const organisation = await repo.createOrganisation('Elsewhere Inc', 'elsewhere-inc');
  otherOrganisationId = organisation.id;
  otherOrganisationKey = 'sy-admin-of-elsewhere-inc-0000000000';
  await repo.insertApiKey({
    organisationId: organisation.id,
    workspaceId: null,
    kind: 'organisation_admin',
    name: 'Elsewhere admin',
    description: null,
    scopes: [...scopesForKind('organisation_admin')],
    userId: null,
    expiresAt: null,
    ...keyMaterialOf(otherOrganisationKey, 'sy-'),
  });
});
after(() => h.close());

/** Each group of tests logs in an hour of its own, so that their lists do not meet. */
let hours = 0;
function hourOfItsOwn(): { start: number; range: string } {
  const start = Date.UTC(2026, 2, 14, 0, 0, 0) + hours++ * 3_600_000;
  return {
    start,
    range: `start_time=${new Date(start).toISOString()}&end_time=${new Date(start + 3_600_000).toISOString()}`,
  };
}

function requestLog(
  overrides: Partial<RequestLogInit> & { createdAtMs: string },
): RequestLogInit & { id: string } {
  return {
    id: randomUUID(),
    organisationId: h.organisationId,
    workspaceId: h.workspaceId,
    apiKeyId: randomUUID(),
    method: 'POST',
    path: '/v1/chat/completions',
    provider: 'openai',
    model: 'gpt-4o-mini',
    status: 200,
    latencyMs: 300,
    requestBody: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }),
    responseBody: JSON.stringify({ id: 'chatcmpl-1', choices: [] }),
    usage: { promptTokens: 9, completionTokens: 3, totalTokens: 12 },
    ...overrides,
  } as RequestLogInit & { id: string };
}

async function publishAll(logs: RequestLogInit[]): Promise<void> {
  for (const log of logs) {
    publishEvent(h.bus, Topics.requestLogs, events.RequestLogEventSchema, log.workspaceId ?? '', log);
  }
  await h.bus.flush();
}

function publishFeedback(feedback: Partial<FeedbackInit> & { traceId: string }): string {
  const id = randomUUID();
  const at = String(Date.UTC(2026, 2, 15));
  publishEvent(h.bus, Topics.feedback, events.FeedbackEventSchema, feedback.traceId, {
    id,
    organisationId: h.organisationId,
    workspaceId: h.workspaceId,
    value: 5,
    weight: 1,
    metadataJson: '{}',
    createdBy: 'someone',
    createdAtMs: at,
    updatedAtMs: at,
    version: 1,
    ...feedback,
  });
  return id;
}

const list = (query: string, key = h.workspaceKey) => h.request('GET', `/v1/logs?${query}`, { key });

/** The ids a list answers, in its order. */
async function idsOf(query: string, key = h.workspaceKey): Promise<string[]> {
  const res = await list(query, key);
  assert.equal(res.status, 200, res.text);
  return (res.body.data as Array<{ id: string }>).map((log) => log.id);
}

describe('searching logs', () => {
  const { start, range } = hourOfItsOwn();
  const at = (minute: number) => String(start + minute * 60_000);
  const keyId = randomUUID();
  const fixtures = () => ({
    search: requestLog({
      createdAtMs: at(1),
      model: 'gpt-4o',
      metadata: { team: 'search', _user: 'alice' },
      traceId: 'trace-search',
      cacheStatus: 'HIT',
      cost: 0.01,
      latencyMs: 100,
      policy: { decision: 'allowed' },
      guardrails: [
        { phase: 'input', guardrailId: 'g-1', slug: 'pii', versionId: 'v1', action: 'allow' },
        { phase: 'output', guardrailId: 'g-2', slug: 'words', versionId: 'v1', action: 'warn' },
      ],
    }),
    limited: requestLog({
      createdAtMs: at(2),
      provider: 'anthropic',
      model: 'claude-sonnet-4',
      status: 429,
      metadata: { team: 'ads' },
      cacheStatus: 'MISS',
      cost: 0,
      latencyMs: 5,
      policy: { decision: 'denied', policyId: 'rate-1', code: 'rate_limit_exceeded' },
    }),
    denied: requestLog({
      createdAtMs: at(3),
      status: 446,
      metadata: { team: 'search', _user: 'bob' },
      cost: 0,
      latencyMs: 40,
      guardrails: [{ phase: 'input', guardrailId: 'g-3', slug: 'words', versionId: 'v1', action: 'deny' }],
    }),
    failed: requestLog({
      createdAtMs: at(4),
      status: 502,
      apiKeyId: keyId,
      configSlug: 'prod-chat',
      cost: 0.2,
      latencyMs: 2_500,
      cacheStatus: 'MISS',
    }),
    slow: requestLog({
      createdAtMs: at(5),
      apiKeyId: keyId,
      model: 'gpt-4o',
      traceId: 'trace-slow',
      cost: 0.5,
      latencyMs: 9_000,
      metadata: { team: 'search', _user: 'alice' },
      guardrails: [{ phase: 'output', guardrailId: 'g-4', slug: 'pii', versionId: 'v1', action: 'redact' }],
    }),
  });
  let logs: ReturnType<typeof fixtures>;
  let all: Array<ReturnType<typeof requestLog>>;
  const newestFirst = (...picked: Array<{ id: string }>) =>
    all
      .filter((log) => picked.includes(log))
      .reverse()
      .map((log) => log.id);

  before(async () => {
    logs = fixtures();
    all = Object.values(logs);
    await publishAll(all);
  });

  test('without filters, every log of the range newest first, as summaries without bodies', async () => {
    const res = await list(range);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.object, 'list');
    assert.equal(res.body.next_cursor, null);
    assert.deepEqual(
      res.body.data.map((log: { id: string }) => log.id),
      newestFirst(...all),
    );
    const search = res.body.data.at(-1);
    assert.deepEqual(search, {
      id: logs.search.id,
      object: 'log',
      created_at: new Date(start + 60_000).toISOString(),
      source: 'gateway',
      organisation_id: h.organisationId,
      workspace_id: h.workspaceId,
      api_key_id: logs.search.apiKeyId,
      trace_id: 'trace-search',
      span_id: null,
      span_name: null,
      metadata: { team: 'search', _user: 'alice' },
      method: 'POST',
      path: '/v1/chat/completions',
      provider: 'openai',
      model: 'gpt-4o',
      status: 200,
      stream: false,
      latency_ms: 100,
      cache_status: 'HIT',
      config: null,
      retry_count: 0,
      usage: {
        prompt_tokens: 9,
        completion_tokens: 3,
        total_tokens: 12,
        cached_tokens: 0,
        reasoning_tokens: 0,
      },
      cost: 0.01,
      policy_decision: 'allowed',
      guardrails: [
        { phase: 'input', slug: 'pii', action: 'allow' },
        { phase: 'output', slug: 'words', action: 'warn' },
      ],
      mcp: null,
      prompt: null,
      error_message: null,
      feedback: [],
    });
  });

  const cases: Array<[string, Array<keyof typeof logs>]> = [
    ['status=200', ['search', 'slow']],
    ['status=4xx', ['limited', 'denied']],
    ['status=429,5xx', ['limited', 'failed']],
    ['status=2XX,446', ['search', 'denied', 'slow']],
    ['model=gpt-4o', ['search', 'slow']],
    ['model=gpt-4o,claude-sonnet-4', ['search', 'limited', 'slow']],
    ['provider=anthropic', ['limited']],
    ['trace_id=trace-slow', ['slow']],
    ['metadata.team=search', ['search', 'denied', 'slow']],
    ['metadata.team=search&metadata._user=alice', ['search', 'slow']],
    ['user=bob', ['denied']],
    ['api_key_id=KEY', ['failed', 'slow']],
    [`workspace_id=WORKSPACE`, ['search', 'limited', 'denied', 'failed', 'slow']],
    ['cost_min=0.2', ['failed', 'slow']],
    ['cost_max=0.01', ['search', 'limited', 'denied']],
    ['cost_min=0.01&cost_max=0.2', ['search', 'failed']],
    ['latency_min=2500', ['failed', 'slow']],
    ['latency_max=40', ['limited', 'denied']],
    ['cache_status=miss', ['limited', 'failed']],
    ['cache_status=HIT,MISS', ['search', 'limited', 'failed']],
    ['guardrail_action=deny', ['denied']],
    ['guardrail_action=warn,redact', ['search', 'slow']],
    ['guardrail_action=allow', ['search']],
    ['policy_decision=denied', ['limited']],
    ['policy_decision=allowed,denied', ['search', 'limited']],
    ['model=gpt-4o&status=2xx&user=alice&latency_max=1000', ['search']],
    ['model=gpt-4o&provider=anthropic', []],
    ['config=prod-chat', ['failed']],
    ['config=staging,prod-chat', ['failed']],
    ['config=staging', []],
  ];
  for (const [filters, expected] of cases) {
    test(`${filters} lists ${expected.length > 0 ? expected.join(', ') : 'nothing'}`, async () => {
      const query = filters.replace('KEY', keyId).replace('WORKSPACE', h.workspaceId);
      assert.deepEqual(await idsOf(`${range}&${query}`), newestFirst(...expected.map((name) => logs[name])));
    });
  }

  test('the time range is half-open: from start_time, before end_time', async () => {
    const from = new Date(start + 2 * 60_000).toISOString();
    const to = new Date(start + 4 * 60_000).toISOString();
    assert.deepEqual(
      await idsOf(`start_time=${from}&end_time=${to}`),
      newestFirst(logs.limited, logs.denied),
    );
  });
});

describe('paging', () => {
  const { start, range } = hourOfItsOwn();
  // Most share one instant: only the id tells them apart.
  let logs: Array<ReturnType<typeof requestLog>>;

  before(async () => {
    logs = [
      ...Array.from({ length: 23 }, () => requestLog({ createdAtMs: String(start + 600_000) })),
      requestLog({ createdAtMs: String(start + 60_000) }),
      requestLog({ createdAtMs: String(start + 1_200_000) }),
    ];
    await publishAll(logs);
  });

  async function walk(query: string, key = h.workspaceKey): Promise<string[][]> {
    const pages: string[][] = [];
    let cursor: string | null = null;
    do {
      const res = await list(cursor === null ? query : `${query}&cursor=${cursor}`, key);
      assert.equal(res.status, 200, res.text);
      pages.push(res.body.data.map((log: { id: string }) => log.id));
      cursor = res.body.next_cursor;
      assert.ok(pages.length <= 30, 'the walk ends');
    } while (cursor !== null);
    return pages;
  }

  test('a walk page by page answers every log once, newest first, ties by id', async () => {
    const pages = await walk(`${range}&limit=4`);
    assert.deepEqual(
      pages.map((page) => page.length),
      [4, 4, 4, 4, 4, 4, 1],
    );
    const tied = logs
      .slice(0, 23)
      .map((log) => log.id)
      .sort()
      .reverse();
    assert.deepEqual(pages.flat(), [logs[24]!.id, ...tied, logs[23]!.id]);
  });

  test('a page as long as what is left is the last one; limit defaults to 50', async () => {
    const exact = await list(`${range}&limit=25`);
    assert.equal(exact.body.data.length, 25);
    assert.equal(exact.body.next_cursor, null);
    const all = await list(range);
    assert.equal(all.body.data.length, 25);
    assert.equal(all.body.next_cursor, null);
  });

  test("an organisation admin key's walk over every workspace answers each log once as well", async () => {
    const elsewhere = Array.from({ length: 5 }, () =>
      requestLog({ workspaceId: otherWorkspaceId, createdAtMs: String(start + 600_000) }),
    );
    await publishAll(elsewhere);
    const pages = await walk(`${range}&limit=6`, h.adminKey);
    const ids = pages.flat();
    assert.equal(new Set(ids).size, ids.length, 'no log twice');
    assert.deepEqual(ids.toSorted(), [...logs, ...elsewhere].map((log) => log.id).sort());
    assert.deepEqual((await walk(`${range}&limit=6`)).flat().toSorted(), logs.map((log) => log.id).sort());
  });

  test('a cursor holds with the filters it came with only', async () => {
    const first = await list(`${range}&limit=4&status=200`);
    const cursor = first.body.next_cursor as string;
    assert.ok(cursor);
    const next = await list(`${range}&limit=10&status=200&cursor=${cursor}`);
    assert.equal(next.status, 200, 'a new limit is fine');
    for (const [query, key] of [
      [`${range}&limit=4&status=5xx&cursor=${cursor}`, h.workspaceKey],
      [`${range}&cursor=${cursor}`, h.workspaceKey],
      [`${range}&limit=4&status=200&cursor=${cursor}`, otherWorkspaceKey],
      [`${range}&limit=4&status=200&cursor=${cursor}`, otherOrganisationKey],
      [`${range}&cursor=not-a-cursor`, h.workspaceKey],
      [`${range}&cursor=${Buffer.from('{"q":1}').toString('base64url')}`, h.workspaceKey],
    ] as const) {
      const res = await list(query, key);
      assert.equal(res.status, 400, `${query}: ${res.text}`);
      assert.equal(res.body.error.param, 'cursor');
    }
  });
});

describe('tenancy', () => {
  const { start, range } = hourOfItsOwn();
  let mine: ReturnType<typeof requestLog>;
  let theirs: ReturnType<typeof requestLog>;
  let elsewhere: ReturnType<typeof requestLog>;

  before(async () => {
    mine = requestLog({ createdAtMs: String(start + 1_000), traceId: `trace-${randomUUID()}` });
    theirs = requestLog({ createdAtMs: String(start + 2_000), workspaceId: otherWorkspaceId });
    elsewhere = requestLog({
      createdAtMs: String(start + 3_000),
      organisationId: otherOrganisationId,
      workspaceId: randomUUID(),
    });
    await publishAll([mine, theirs, elsewhere]);
  });

  test("a workspace key lists its workspace's logs only, whatever it asks", async () => {
    assert.deepEqual(await idsOf(range), [mine.id]);
    assert.deepEqual(await idsOf(range, otherWorkspaceKey), [theirs.id]);
    assert.deepEqual(await idsOf(`${range}&trace_id=${mine.traceId}`, otherWorkspaceKey), []);
    assert.deepEqual(await idsOf(`${range}&api_key_id=${mine.apiKeyId}`, otherWorkspaceKey), []);
    const named = await list(`${range}&workspace_id=${otherWorkspaceId}`);
    assert.equal(named.status, 404);
    assert.equal(named.body.error.type, 'not_found_error');
    assert.deepEqual(await idsOf(`${range}&workspace_id=${h.workspaceId}`), [mine.id]);
  });

  test("an organisation admin key lists every workspace of its organisation, or the one it names, and no other organisation's", async () => {
    assert.deepEqual(await idsOf(range, h.adminKey), [theirs.id, mine.id]);
    assert.deepEqual(await idsOf(`${range}&workspace_id=${otherWorkspaceId}`, h.adminKey), [theirs.id]);
    assert.deepEqual(await idsOf(`${range}&api_key_id=${elsewhere.apiKeyId}`, h.adminKey), []);
    assert.deepEqual(await idsOf(range, otherOrganisationKey), [elsewhere.id]);
    assert.deepEqual(await idsOf(`${range}&workspace_id=${h.workspaceId}`, otherOrganisationKey), []);
  });

  test('no key is 401; a key without logs.list is 403', async () => {
    assert.equal((await h.request('GET', `/v1/logs?${range}`)).status, 401);
    const key = await h.request('POST', '/v2/api-keys/workspace/service', {
      key: h.adminKey,
      json: { name: 'Models only', workspace_id: h.workspaceId, scopes: ['completions.write'] },
    });
    assert.equal(key.status, 200, key.text);
    const res = await list(range, key.body.key);
    assert.equal(res.status, 403);
    assert.equal(res.body.error.code, 'missing_scope');
  });
});

describe('bad filters', () => {
  const far = '2026-01-01T00:00:00Z';
  const cases: Array<[string, string]> = [
    ['start_time=yesterday', 'start_time'],
    ['end_time=2026-03-14', 'end_time'],
    ['start_time=2026-03-14T00:00:00Z&end_time=2026-03-13T00:00:00Z', 'end_time'],
    [`start_time=${far}&end_time=2026-03-14T00:00:00Z`, 'start_time'],
    ['start_time=2099-01-01T00:00:00Z', 'end_time'],
    ['status=abc', 'status'],
    ['status=200,6xx', 'status'],
    ['status=', 'status'],
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=ten', 'limit'],
    ['cost_min=-1', 'cost_min'],
    ['cost_min=2&cost_max=1', 'cost_max'],
    ['latency_min=1.5', 'latency_min'],
    ['latency_min=10&latency_max=5', 'latency_max'],
    ['cache_status=COLD', 'cache_status'],
    ['guardrail_action=block', 'guardrail_action'],
    ['policy_decision=maybe', 'policy_decision'],
    ['api_key_id=not-a-key', 'api_key_id'],
    ['workspace_id=ws-1', 'workspace_id'],
    ['model=a&model=b', 'model'],
    ['modle=gpt-4o', 'modle'],
    [`metadata.${'k'.repeat(129)}=v`, `metadata.${'k'.repeat(129)}`],
    ['metadata.team=a&metadata.team=b', 'metadata.team'],
  ];
  for (const [query, param] of cases) {
    test(`${query.slice(0, 60)} is a 400 naming ${param.slice(0, 20)}`, async () => {
      const res = await list(query);
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.error.type, 'invalid_request_error');
      assert.equal(res.body.error.param, param, res.text);
    });
  }
});

describe('one log in full', () => {
  const { start, range } = hourOfItsOwn();
  const traceId = `trace-${randomUUID()}`;
  const fixture = () =>
    requestLog({
      createdAtMs: String(start + 1_000),
      traceId,
      configSlug: 'pc-prod',
      routePath: 'config.targets[1]',
      retryCount: 2,
      cost: 0.003,
      latencyMs: 812,
      policy: {
        decision: 'allowed',
        adjustments: [{ policyId: 'usage-1', type: 'cost', held: 0.01, used: 0.003 }],
      },
      guardrails: [
        { phase: 'input', guardrailId: 'g-1', slug: 'pii', versionId: 'v1', action: 'warn', durationMs: 1.5 },
      ],
    });
  let log: ReturnType<typeof requestLog>;
  let theirs: ReturnType<typeof requestLog>;
  const ids: Record<string, string> = {};

  before(async () => {
    log = fixture();
    theirs = requestLog({ createdAtMs: String(start + 2_000), traceId, workspaceId: otherWorkspaceId });
    await publishAll([log, theirs]);
    ids.mine = publishFeedback({ traceId, value: 7, weight: 0.5, metadataJson: '{"note":"good"}' });
    ids.organisation = publishFeedback({ traceId, workspaceId: '', value: -2 });
    ids.theirs = publishFeedback({ traceId, workspaceId: otherWorkspaceId, value: 1 });
    await h.bus.flush();
  });

  test('shows timings, usage, cost, retries, verdicts and the feedback of its workspace and organisation', async () => {
    const res = await h.request('GET', `/v1/logs/${log.id}`, { key: h.workspaceKey });
    assert.equal(res.status, 200, res.text);
    const body = res.body;
    assert.equal(body.source, 'gateway');
    assert.equal(body.created_at, new Date(start + 1_000).toISOString());
    assert.equal(body.latency_ms, 812);
    assert.deepEqual(body.usage, {
      prompt_tokens: 9,
      completion_tokens: 3,
      total_tokens: 12,
      cached_tokens: 0,
      reasoning_tokens: 0,
    });
    assert.equal(body.cost, 0.003);
    assert.deepEqual(body.route, { target: 'config.targets[1]', retry_count: 2 });
    assert.equal(body.policy.decision, 'allowed');
    assert.equal(body.guardrails[0].action, 'warn');
    assert.equal(body.guardrails[0].duration_ms, 1.5);
    assert.deepEqual(body.request.body, {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Hi' }],
    });
    assert.deepEqual(body.response, { status: 200, body: { id: 'chatcmpl-1', choices: [] } });
    assert.deepEqual(
      body.feedback.map((f: { id: string }) => f.id).sort(),
      [ids.mine, ids.organisation].sort(),
    );
    const mine = body.feedback.find((f: { id: string }) => f.id === ids.mine);
    assert.deepEqual(mine, {
      id: ids.mine,
      object: 'feedback',
      workspace_id: h.workspaceId,
      value: 7,
      weight: 0.5,
      metadata: { note: 'good' },
      version: 1,
      created_by: 'someone',
      created_at: '2026-03-15T00:00:00.000Z',
      updated_at: '2026-03-15T00:00:00.000Z',
    });
  });

  test("an organisation admin key sees the feedback the log's workspace sees, not another workspace's", async () => {
    const res = await h.request('GET', `/v1/logs/${theirs.id}`, { key: h.adminKey });
    assert.deepEqual(
      res.body.feedback.map((f: { id: string }) => f.id).sort(),
      [ids.theirs, ids.organisation].sort(),
    );
  });

  test('a list shows each log with its feedback, by the same rule', async () => {
    const byId = async (key: string) =>
      Object.fromEntries(
        ((await list(range, key)).body.data as Array<{ id: string; feedback: Array<{ id: string }> }>).map(
          (l) => [l.id, l.feedback.map((f) => f.id).sort()],
        ),
      );
    assert.deepEqual(await byId(h.workspaceKey), { [log.id]: [ids.mine, ids.organisation].sort() });
    assert.deepEqual(await byId(h.adminKey), {
      [log.id]: [ids.mine, ids.organisation].sort(),
      [theirs.id]: [ids.theirs, ids.organisation].sort(),
    });
  });
});

describe('custom logs', () => {
  const post = (json: unknown, key = h.workspaceKey) => h.request('POST', '/v1/logs', { key, json });
  const customLog = (overrides: Record<string, unknown> = {}) => ({
    request: {
      url: 'https://api.openai.com/v1/chat/completions?key=secret-in-url',
      method: 'post',
      headers: { Authorization: 'Bearer sk-not-kept' },
      body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'What is AI?' }] },
    },
    response: {
      status: 200,
      headers: { 'Content-Type': 'application/json' },
      body: { id: 'x', usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 } },
      response_time: 123,
    },
    metadata: { trace_id: `trace-${randomUUID()}`, span_name: 'ask', _user: 'carol', team: 'research' },
    ...overrides,
  });

  async function shown(id: string, key = h.workspaceKey) {
    return eventually(
      async () => {
        const res = await h.request('GET', `/v1/logs/${id}`, { key });
        return res.status === 200 ? res.body : undefined;
      },
      { what: `log ${id}` },
    );
  }

  test('one custom log is stored as a log of the workspace: by id in full, and in search', async () => {
    const sent = customLog();
    const res = await post(sent);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.status, 'success');
    assert.equal(res.body.log_ids.length, 1);
    const [id] = res.body.log_ids;
    const log = await shown(id);
    assert.equal(log.source, 'custom');
    assert.equal(log.workspace_id, h.workspaceId);
    assert.equal(log.provider, 'openai');
    assert.equal(log.model, 'gpt-4o');
    assert.equal(log.status, 200);
    assert.equal(log.latency_ms, 123);
    assert.equal(log.trace_id, sent.metadata.trace_id);
    assert.equal(log.span_name, 'ask');
    assert.deepEqual(log.metadata, { _user: 'carol', team: 'research' });
    assert.deepEqual(log.usage, {
      prompt_tokens: 11,
      completion_tokens: 7,
      total_tokens: 18,
      cached_tokens: 0,
      reasoning_tokens: 0,
    });
    assert.deepEqual(log.request, {
      method: 'POST',
      path: 'https://api.openai.com/v1/chat/completions',
      url: 'https://api.openai.com/v1/chat/completions',
      body: sent.request.body,
    });
    assert.deepEqual(log.response, { status: 200, body: sent.response.body });
    assert.doesNotMatch(JSON.stringify(log), /sk-not-kept|secret-in-url/);

    const found = await list(`trace_id=${sent.metadata.trace_id}`);
    assert.deepEqual(
      found.body.data.map((l: { id: string; source: string }) => [l.id, l.source]),
      [[id, 'custom']],
    );
    assert.deepEqual(await idsOf(`trace_id=${sent.metadata.trace_id}`, otherWorkspaceKey), []);
  });

  test('a list of custom logs is answered in order, each stored; any host is its own provider', async () => {
    const traceId = `trace-${randomUUID()}`;
    const res = await post([
      customLog({ metadata: { trace_id: traceId } }),
      {
        request: { url: 'https://llm.internal.example/generate', body: 'plain text prompt' },
        response: { status: 503, body: { error: 'overloaded' } },
        metadata: { trace_id: traceId },
      },
    ]);
    assert.equal(res.status, 200, res.text);
    const [first, second] = res.body.log_ids;
    await shown(first);
    const log = await shown(second);
    assert.equal(log.provider, 'llm.internal.example');
    assert.equal(log.status, 503);
    assert.equal(log.latency_ms, 0);
    assert.deepEqual(log.request.body, 'plain text prompt');
    assert.deepEqual(await idsOf(`trace_id=${traceId}&status=5xx&provider=llm.internal.example`), [second]);
    assert.deepEqual((await idsOf(`trace_id=${traceId}`)).toSorted(), [first, second].sort());
  });

  test('bad custom logs are 400s naming the field, and nothing is stored', async () => {
    const before = h.bus.log(Topics.requestLogs).length;
    const cases: Array<[unknown, string]> = [
      [{ response: { body: {} } }, 'request'],
      [{ request: { body: {} }, response: { body: {} } }, 'request.url'],
      [customLog({ request: { url: 'ftp://files.example/x', body: {} } }), 'request.url'],
      [customLog({ response: { status: 99, body: {} } }), 'response.status'],
      [customLog({ response: { body: {}, response_time: -1 } }), 'response.response_time'],
      [customLog({ metadata: { team: 5 } }), 'metadata.team'],
      [customLog({ extra: true }), 'extra'],
      [Array.from({ length: 101 }, () => customLog()), ''],
      [[], ''],
    ];
    for (const [body, param] of cases) {
      const res = await post(body);
      assert.equal(res.status, 400, `${JSON.stringify(body).slice(0, 80)}: ${res.text}`);
      if (param) assert.equal(res.body.error.param, param, res.text);
    }
    assert.equal(h.bus.log(Topics.requestLogs).length, before);
  });

  test('an organisation admin key cannot send custom logs: they belong to a workspace', async () => {
    const res = await post(customLog(), h.adminKey);
    assert.equal(res.status, 403);
    assert.equal(res.body.error.code, 'workspace_key_required');
  });
});

describe('analytics over the stored logs', () => {
  test('a graph counts the workspace’s logs of the range; another organisation counts none of them', async () => {
    const { start } = hourOfItsOwn();
    const range = `time_of_generation_min=${new Date(start).toISOString()}&time_of_generation_max=${new Date(start + 3_600_000).toISOString()}`;
    await publishAll([
      requestLog({ createdAtMs: String(start + 60_000) }),
      requestLog({ createdAtMs: String(start + 120_000), status: 500 }),
      requestLog({ createdAtMs: String(start + 180_000), model: 'gpt-4o' }),
    ]);
    const graph = await eventually(
      async () => {
        const res = await h.request('GET', `/v2/analytics/graphs/requests?${range}`, { key: h.workspaceKey });
        assert.equal(res.status, 200, res.text);
        return res.body.summary.total === 3 ? res.body : undefined;
      },
      { what: 'three requests in the graph' },
    );
    assert.equal(graph.data_points.length, 1);
    const errors = await h.request('GET', `/v2/analytics/graphs/errors?${range}`, { key: h.workspaceKey });
    assert.equal(errors.status, 200, errors.text);
    assert.equal(errors.body.summary.total, 1);
    const models = await h.request('GET', `/v2/analytics/groups/ai-models?${range}`, { key: h.workspaceKey });
    assert.equal(models.status, 200, models.text);
    assert.deepEqual(
      (models.body.data as Array<{ ai_model: string }>).map((group) => group.ai_model).sort(),
      ['gpt-4o', 'gpt-4o-mini'],
    );
    const elsewhere = await h.request('GET', `/v2/analytics/graphs/requests?${range}`, {
      key: otherOrganisationKey,
    });
    assert.equal(elsewhere.status, 200, elsewhere.text);
    assert.equal(elsewhere.body.summary.total, 0);
    const refused = await h.request('GET', '/v2/analytics/graphs/requests?time_of_generation_min=yesterday', {
      key: h.workspaceKey,
    });
    assert.equal(refused.status, 400, refused.text);
    assert.equal(refused.body.error.param, 'time_of_generation_min');
  });
});
