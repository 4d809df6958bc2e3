// MCP tool calls on the request log: stored with the log, shown by id and in lists, found by
// server and tool, and counted in analytics as requests of provider `mcp` with the tool as model.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { Topics, publishEvent } from '@switchyard/adapters';
import { events } from '@switchyard/proto';
import { controlPlane } from '@switchyard/control-plane';
import { eventually, startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { logExportService } from '../service.ts';

type RequestLogInit = MessageInitShape<typeof events.RequestLogEventSchema>;
/** The MCP call of a log, as the gateway fills it. */
interface McpInit {
  serverSlug?: string;
  integrationSlug?: string;
  method?: string;
  toolName?: string;
  errorCode?: number;
  toolError?: boolean;
  sessionId?: string;
}

let h: ServiceHarness;
before(async () => {
  h = await startServiceHarness({ services: [controlPlane, logExportService] });
});
after(() => h.close());

const START = Date.UTC(2026, 4, 2, 9, 0, 0);
const RANGE = `start_time=${new Date(START).toISOString()}&end_time=${new Date(START + 3_600_000).toISOString()}`;

function toolCall(minute: number, mcp: McpInit, extra: Partial<RequestLogInit> = {}) {
  return {
    id: randomUUID(),
    organisationId: h.organisationId,
    workspaceId: h.workspaceId,
    apiKeyId: randomUUID(),
    method: 'POST',
    path: `/mcp/${mcp.serverSlug ?? 'docs'}`,
    status: 200,
    latencyMs: 42,
    createdAtMs: String(START + minute * 60_000),
    requestBody: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: mcp.toolName },
    }),
    responseBody: JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [] } }),
    cost: 0.002,
    mcp: {
      serverId: '6f1c1a52-52a9-4b6b-9d43-3b0c5f0d1e11',
      serverSlug: 'docs',
      integrationSlug: 'docs-integration',
      method: 'tools/call',
      sessionId: 'session-1',
      ...mcp,
    },
    ...extra,
  } as RequestLogInit & { id: string };
}

const fixtures = () => ({
  search: toolCall(1, { toolName: 'search' }),
  fetchFailed: toolCall(2, { toolName: 'fetch', toolError: true, sessionId: '' }),
  limited: toolCall(
    3,
    { serverSlug: 'tickets', integrationSlug: '', toolName: 'search', errorCode: -32029 },
    { status: 429, cost: 0 },
  ),
  listed: toolCall(4, { method: 'tools/list', toolName: '' }, { cost: 0 }),
});
let logs: ReturnType<typeof fixtures>;
const chat = {
  id: randomUUID(),
  organisationId: '',
  workspaceId: '',
  apiKeyId: randomUUID(),
  method: 'POST',
  path: '/v1/chat/completions',
  provider: 'openai',
  model: 'gpt-4o-mini',
  status: 200,
  latencyMs: 300,
  createdAtMs: String(START + 5 * 60_000),
  requestBody: '{}',
  responseBody: '{}',
};

async function ids(query: string): Promise<string[]> {
  const res = await h.request('GET', `/v1/logs?${RANGE}&${query}`, { key: h.workspaceKey });
  assert.equal(res.status, 200, res.text);
  return (res.body.data as Array<{ id: string }>).map((log) => log.id).sort();
}

describe('MCP calls on the request log', () => {
  before(async () => {
    logs = fixtures();
    for (const log of [
      ...Object.values(logs),
      { ...chat, organisationId: h.organisationId, workspaceId: h.workspaceId },
    ])
      publishEvent(h.bus, Topics.requestLogs, events.RequestLogEventSchema, h.workspaceId, log);
    await h.bus.flush();
  });

  test('a tool call is shown by id with its MCP call, as provider mcp and the tool as model', async () => {
    const res = await h.request('GET', `/v1/logs/${logs.search.id}`, { key: h.workspaceKey });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.mcp, {
      server_id: '6f1c1a52-52a9-4b6b-9d43-3b0c5f0d1e11',
      server_slug: 'docs',
      integration_slug: 'docs-integration',
      method: 'tools/call',
      tool_name: 'search',
      error_code: null,
      tool_error: false,
      session_id: 'session-1',
    });
    assert.equal(res.body.provider, 'mcp');
    assert.equal(res.body.model, 'search');
    assert.equal(res.body.request.path, '/mcp/docs');

    const limited = await h.request('GET', `/v1/logs/${logs.limited.id}`, { key: h.workspaceKey });
    assert.deepEqual(
      [limited.body.mcp.server_slug, limited.body.mcp.integration_slug, limited.body.mcp.error_code],
      ['tickets', null, -32029],
    );
    const listed = await h.request('GET', `/v1/logs/${logs.listed.id}`, { key: h.workspaceKey });
    assert.deepEqual([listed.body.model, listed.body.mcp.tool_name], ['tools/list', null]);
  });

  test('a list shows the MCP call of each log; a model call has none', async () => {
    const res = await h.request('GET', `/v1/logs?${RANGE}`, { key: h.workspaceKey });
    assert.equal(res.status, 200, res.text);
    const byId = new Map((res.body.data as Array<{ id: string; mcp: unknown }>).map((log) => [log.id, log]));
    assert.equal(byId.size, 5);
    assert.equal(byId.get(chat.id)?.mcp, null);
    assert.deepEqual(byId.get(logs.fetchFailed.id)?.mcp, {
      server_id: '6f1c1a52-52a9-4b6b-9d43-3b0c5f0d1e11',
      server_slug: 'docs',
      integration_slug: 'docs-integration',
      method: 'tools/call',
      tool_name: 'fetch',
      error_code: null,
      tool_error: true,
      session_id: null,
    });
  });

  test('search narrows by MCP server and tool, alternatives comma-separated', async () => {
    const sorted = (...picked: Array<{ id: string }>) => picked.map((log) => log.id).sort();
    assert.deepEqual(await ids('mcp_server=docs'), sorted(logs.search, logs.fetchFailed, logs.listed));
    assert.deepEqual(await ids('tool_name=search'), sorted(logs.search, logs.limited));
    assert.deepEqual(await ids('mcp_server=docs&tool_name=search'), sorted(logs.search));
    assert.deepEqual(
      await ids('mcp_server=tickets,docs&tool_name=fetch,search'),
      sorted(logs.search, logs.fetchFailed, logs.limited),
    );
    assert.deepEqual(await ids('provider=mcp&model=fetch'), sorted(logs.fetchFailed));
    assert.deepEqual(await ids('mcp_server=elsewhere'), []);
  });

  test('a bad MCP filter is a 400 naming it', async () => {
    const cases: Array<[string, string]> = [
      ['mcp_server=', 'mcp_server'],
      [`tool_name=${'t'.repeat(300)}`, 'tool_name'],
      [`mcp_server=${Array.from({ length: 21 }, (_, i) => `s${i}`).join(',')}`, 'mcp_server'],
    ];
    for (const [query, param] of cases) {
      const res = await h.request('GET', `/v1/logs?${RANGE}&${query}`, { key: h.workspaceKey });
      assert.equal(res.status, 400, `${query.slice(0, 40)}: ${res.text}`);
      assert.equal(res.body.error.param, param);
    }
  });

  test('analytics count tool calls as requests of provider mcp, each tool a model', async () => {
    const range = `time_of_generation_min=${new Date(START).toISOString()}&time_of_generation_max=${new Date(START + 3_600_000).toISOString()}`;
    const graph = await eventually(
      async () => {
        const res = await h.request('GET', `/v2/analytics/graphs/requests?${range}`, { key: h.workspaceKey });
        assert.equal(res.status, 200, res.text);
        return res.body.summary.total === 5 ? res.body : undefined;
      },
      { what: 'five requests in the graph' },
    );
    assert.equal(graph.summary.total, 5);
    const models = await h.request('GET', `/v2/analytics/groups/ai-models?${range}`, { key: h.workspaceKey });
    assert.equal(models.status, 200, models.text);
    assert.deepEqual(
      (models.body.data as Array<{ ai_model: string }>).map((group) => group.ai_model).sort(),
      ['fetch', 'gpt-4o-mini', 'search', 'tools/list'],
    );
    const errors = await h.request('GET', `/v2/analytics/graphs/errors?${range}`, { key: h.workspaceKey });
    assert.equal(errors.body.summary.total, 1, 'the rate-limited call');
  });
});
