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

let h: ServiceHarness;
let otherWorkspaceKey: string;

before(async () => {
  h = await startServiceHarness({ services: [controlPlane, logExportService] });
  const workspace = await h.request('POST', '/v2/workspaces', {
    key: h.adminKey,
    json: { name: 'Other team' },
  });
  const key = await h.request('POST', '/v2/api-keys/workspace/service', {
    key: h.adminKey,
    json: { name: 'Other team key', workspace_id: workspace.body.id },
  });
  otherWorkspaceKey = key.body.key;
});
after(() => h.close());

function requestLog(overrides: Partial<RequestLogInit> = {}): RequestLogInit & { id: string } {
  return {
    id: randomUUID(),
    organisationId: h.organisationId,
    workspaceId: h.workspaceId,
    apiKeyId: randomUUID(),
    traceId: 'trace-abc',
    spanId: 'span-1',
    w3cTraceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    metadata: { team: 'search', env: 'staging' },
    method: 'POST',
    path: '/v1/chat/completions',
    provider: 'openai',
    model: 'gpt-4o-mini',
    integrationSlug: 'team-openai',
    status: 200,
    stream: false,
    createdAtMs: String(Date.UTC(2026, 2, 14, 12, 30, 15, 250)),
    latencyMs: 321,
    requestBody: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }),
    responseBody: JSON.stringify({ id: 'chatcmpl-1', choices: [] }),
    usage: { promptTokens: 9, completionTokens: 3, totalTokens: 12 },
    ...overrides,
  } as RequestLogInit & { id: string };
}

function publish(event: RequestLogInit) {
  publishEvent(h.bus, Topics.requestLogs, events.RequestLogEventSchema, event.workspaceId ?? '', event);
}

async function rowsWithId(id: string): Promise<number> {
  const [row] = await h
    .db('log-export')
    .query(`SELECT count(*)::int AS n FROM log_export.request_logs WHERE id = $1`, [id]);
  return row.n;
}

const readLog = (id: string, key: string) => h.request('GET', `/v1/logs/${id}`, { key });

async function stored(id: string, key = h.workspaceKey) {
  return eventually(
    async () => {
      const res = await readLog(id, key);
      return res.status === 200 ? res : undefined;
    },
    { what: `log ${id}` },
  );
}

describe('storing request logs', () => {
  test('an event delivered twice becomes one log, which its workspace key can read', async () => {
    const event = requestLog();
    publish(event);
    publish(event);
    await h.bus.flush();
    assert.equal(await rowsWithId(event.id), 1);

    const res = await readLog(event.id, h.workspaceKey);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {
      id: event.id,
      object: 'log',
      created_at: '2026-03-14T12:30:15.250Z',
      source: 'gateway',
      organisation_id: h.organisationId,
      workspace_id: h.workspaceId,
      api_key_id: event.apiKeyId,
      trace_id: 'trace-abc',
      span_id: 'span-1',
      parent_span_id: null,
      span_name: null,
      w3c_trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
      metadata: { team: 'search', env: 'staging' },
      provider: 'openai',
      model: 'gpt-4o-mini',
      integration_slug: 'team-openai',
      status: 200,
      stream: false,
      latency_ms: 321,
      cache_status: null,
      cache_namespace: null,
      cache_force_refresh: false,
      models_endpoint: false,
      config: null,
      route: null,
      usage: {
        prompt_tokens: 9,
        completion_tokens: 3,
        total_tokens: 12,
        cached_tokens: 0,
        reasoning_tokens: 0,
      },
      cost: 0,
      policy: null,
      guardrails: [],
      mcp: null,
      prompt: null,
      error_message: null,
      request: {
        method: 'POST',
        path: '/v1/chat/completions',
        body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] },
      },
      response: { status: 200, body: { id: 'chatcmpl-1', choices: [] } },
      feedback: [],
    });
  });

  test('what rate and usage limits did with a request is shown: the decision, a denying policy, every hold', async () => {
    const allowed = requestLog({
      policy: {
        decision: 'allowed',
        adjustments: [
          { policyId: 'rate-1', type: 'requests', held: 1, used: 1 },
          { policyId: 'usage-1', type: 'cost', held: 0.002, used: 0.0005 },
        ],
      },
    });
    const denied = requestLog({
      status: 429,
      policy: { decision: 'denied', policyId: 'rate-1', code: 'rate_limit_exceeded' },
    });
    publish(allowed);
    publish(denied);
    await h.bus.flush();
    assert.deepEqual((await stored(allowed.id)).body.policy, {
      decision: 'allowed',
      policy_id: null,
      code: null,
      adjustments: [
        { policy_id: 'rate-1', type: 'requests', held: 1, used: 1 },
        { policy_id: 'usage-1', type: 'cost', held: 0.002, used: 0.0005 },
      ],
    });
    assert.deepEqual((await stored(denied.id)).body.policy, {
      decision: 'denied',
      policy_id: 'rate-1',
      code: 'rate_limit_exceeded',
      adjustments: [],
    });
  });

  test('what each guardrail did with a request is shown in the order they ran, with every check', async () => {
    const warned = requestLog({
      guardrails: [
        {
          phase: 'input',
          guardrailId: 'g-1',
          slug: 'guard_pii-1a2b3c4d',
          versionId: 'v-1',
          action: 'warn',
          explanation: 'default.pii: the text holds an email address',
          durationMs: 0.125,
          checks: [
            { id: 'default.pii', name: 'No emails', passed: false, explanation: 'an email address' },
            { id: 'webhook', name: 'webhook', passed: true, explanation: 'unreachable', error: 'timed out' },
          ],
        },
        {
          phase: 'output',
          guardrailId: 'g-2',
          slug: 'guard_words-1a2b3c4d',
          versionId: 'v-3',
          action: 'redact',
          explanation: 'default.regex: matched',
          redactions: 2,
          durationMs: 1.5,
          checks: [{ id: 'default.regex', name: 'default.regex', passed: false, explanation: 'matched' }],
        },
      ],
    });
    const denied = requestLog({
      status: 446,
      guardrails: [
        {
          phase: 'input',
          guardrailId: 'g-3',
          slug: 'guard_words-5e6f7a8b',
          versionId: 'v-1',
          action: 'deny',
          explanation: 'default.contains: the text holds forbidden words',
          checks: [
            { id: 'default.contains', name: 'default.contains', passed: false, explanation: 'classified' },
          ],
        },
      ],
    });
    publish(warned);
    publish(denied);
    await h.bus.flush();
    assert.deepEqual((await stored(warned.id)).body.guardrails, [
      {
        phase: 'input',
        guardrail_id: 'g-1',
        slug: 'guard_pii-1a2b3c4d',
        version_id: 'v-1',
        action: 'warn',
        explanation: 'default.pii: the text holds an email address',
        redactions: 0,
        duration_ms: 0.125,
        checks: [
          {
            id: 'default.pii',
            name: 'No emails',
            passed: false,
            explanation: 'an email address',
            error: null,
          },
          { id: 'webhook', name: 'webhook', passed: true, explanation: 'unreachable', error: 'timed out' },
        ],
      },
      {
        phase: 'output',
        guardrail_id: 'g-2',
        slug: 'guard_words-1a2b3c4d',
        version_id: 'v-3',
        action: 'redact',
        explanation: 'default.regex: matched',
        redactions: 2,
        duration_ms: 1.5,
        checks: [
          { id: 'default.regex', name: 'default.regex', passed: false, explanation: 'matched', error: null },
        ],
      },
    ]);
    const deniedLog = (await stored(denied.id)).body;
    assert.equal(deniedLog.status, 446);
    assert.deepEqual(deniedLog.guardrails, [
      {
        phase: 'input',
        guardrail_id: 'g-3',
        slug: 'guard_words-5e6f7a8b',
        version_id: 'v-1',
        action: 'deny',
        explanation: 'default.contains: the text holds forbidden words',
        redactions: 0,
        duration_ms: 0,
        checks: [
          {
            id: 'default.contains',
            name: 'default.contains',
            passed: false,
            explanation: 'classified',
            error: null,
          },
        ],
      },
    ]);
  });

  test('a log stored before guardrail verdicts were kept shows an empty list', async () => {
    const event = requestLog();
    publish(event);
    await h.bus.flush();
    await stored(event.id);
    await h
      .db('log-export')
      .query(`UPDATE log_export.request_logs SET guardrails = NULL WHERE id = $1`, [event.id]);
    assert.deepEqual((await readLog(event.id, h.workspaceKey)).body.guardrails, []);
  });

  test('a request routed by a saved config shows the config, the target that answered and its retries', async () => {
    const event = requestLog({ configSlug: 'pc-prod-1a2b3c', routePath: 'config.targets[1]', retryCount: 2 });
    publish(event);
    await h.bus.flush();
    const res = await stored(event.id);
    assert.equal(res.body.config, 'pc-prod-1a2b3c');
    assert.deepEqual(res.body.route, { target: 'config.targets[1]', retry_count: 2 });
  });

  test('a body that is not JSON is shown as text', async () => {
    const event = requestLog({
      requestBody: 'not json {',
      status: 400,
      errorMessage: 'Request body is not valid JSON',
    });
    publish(event);
    const res = await stored(event.id);
    assert.equal(res.body.request.body, 'not json {');
    assert.equal(res.body.error_message, 'Request body is not valid JSON');
    assert.equal(res.body.status, 400);
  });

  test('an undecodable message on the topic is skipped and later events still arrive', async () => {
    h.bus.publish({
      topic: Topics.requestLogs,
      key: 'junk',
      value: Uint8Array.from([0xff, 0xff, 0xff, 0xff]),
    });
    h.bus.publish({ topic: Topics.requestLogs, key: 'junk', value: Uint8Array.from([0x07]) });
    const event = requestLog();
    publish(event);
    await stored(event.id);
    assert.equal(await rowsWithId(event.id), 1);
  });

  test('text Postgres cannot hold (U+0000) is stored with a replacement and does not hold back later logs', async () => {
    const poisoned = requestLog({
      metadata: { note: 'a\u0000b' },
      requestBody: '{"model":"x","messages":[]}\u0000',
    });
    publish(poisoned);
    const later = requestLog();
    publish(later);
    await stored(later.id);
    const res = await stored(poisoned.id);
    assert.deepEqual(res.body.metadata, { note: 'a\uFFFDb' });
  });

  test('an event the database rejects is skipped instead of blocking the topic', async () => {
    publish(requestLog({ workspaceId: 'not-a-uuid' }));
    const later = requestLog();
    publish(later);
    await stored(later.id);
  });
});

describe('reading request logs', () => {
  let event: ReturnType<typeof requestLog>;

  before(async () => {
    event = requestLog();
    publish(event);
    await stored(event.id);
  });

  test('a workspace key of another workspace gets 404', async () => {
    const res = await readLog(event.id, otherWorkspaceKey);
    assert.equal(res.status, 404);
    assert.equal(res.body.error.type, 'not_found_error');
  });

  test('the organisation admin key of the same organisation can read it', async () => {
    const res = await readLog(event.id, h.adminKey);
    assert.equal(res.status, 200);
    assert.equal(res.body.id, event.id);
  });

  test('keys of another organisation get 404', async () => {
    const repo = new IdentityRepository(h.db('control-plane').manager);
    const organisation = await repo.createOrganisation('Other Inc', 'other-inc');
    const adminKey = 'sy-admin-of-another-organisation-000000';
    await repo.insertApiKey({
      organisationId: organisation.id,
      workspaceId: null,
      kind: 'organisation_admin',
      name: 'Other admin',
      description: null,
      scopes: [...scopesForKind('organisation_admin')],
      userId: null,
      expiresAt: null,
      ...keyMaterialOf(adminKey, 'sy-'),
    });
    assert.equal((await readLog(event.id, adminKey)).status, 404);
  });

  test('an unknown log is 404, a malformed id is 400, and no key is 401', async () => {
    assert.equal((await readLog(randomUUID(), h.workspaceKey)).status, 404);
    const malformed = await readLog('has%20space', h.workspaceKey);
    assert.equal(malformed.status, 400);
    assert.equal((await h.request('GET', `/v1/logs/${event.id}`)).status, 401);
  });
});
