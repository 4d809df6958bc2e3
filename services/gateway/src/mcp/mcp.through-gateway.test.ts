import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { fromBinary, type MessageInitShape } from '@bufbuild/protobuf';
import { createLogger, flushTraces } from '@switchyard/core';
import type { Principal } from '@switchyard/access';
import { Topics, publishEvent } from '@switchyard/adapters';
import { GrpcServer } from '@switchyard/runtime';
import { events, mcp } from '@switchyard/proto';
import {
  eventually,
  startFakeMcpServer,
  startOtlpReceiver,
  type FakeMcp,
  type OtlpReceiver,
  type ServiceHarness,
} from '@switchyard/testing';
import { newPrincipal, startGatewayWithStandIns } from '../testing/policy-stand-ins.ts';
import { McpGatewayError } from './errors.ts';

// The MCP gateway as the gateway service serves it: the data plane's own authentication, the
// MCP directory read over gRPC (a stand-in for control-plane's) and dropped on change events,
// the upstream reached through the gateway's dispatchers.

const logger = createLogger('test');
logger.silent = true;

const KEY = 'sy-mcp-through-gateway-key-000000000';
const principal: Principal = newPrincipal();
let h: ServiceHarness;
let close: () => Promise<void>;
let fake: FakeMcp;
let directory: GrpcServer;
let receiver: OtlpReceiver;
let route: MessageInitShape<typeof mcp.McpServerRouteSchema>;
const clients: Client[] = [];

before(async () => {
  receiver = await startOtlpReceiver();
  fake = await startFakeMcpServer({ requireBearer: 'upstream-token-1' });
  route = {
    id: randomUUID(),
    slug: 'crm',
    name: 'CRM',
    organisationId: principal.organisationId,
    workspaceId: principal.workspaceId!,
    integrationSlug: 'crm-tools',
    url: fake.endpoint,
    auth: { type: 'headers', headers: { authorization: 'Bearer upstream-token-1' } },
    enabled: true,
    defaultToolAccess: 'allow',
    defaultKeyAccess: 'allow',
    defaultUserAccess: 'allow',
  };
  directory = new GrpcServer({ logger, security: {} });
  directory.add(
    mcp.McpDirectoryService,
    {
      getMcpServer: async ({ organisationId, idOrSlug }) =>
        organisationId === route.organisationId && idOrSlug === route.slug ? { server: route } : {},
    },
    { getMcpServer: ['gateway'] },
  );
  const port = await directory.listen('127.0.0.1', 0);
  ({ h, close } = await startGatewayWithStandIns(
    new Map([[KEY, principal]]),
    { TRUSTED_CUSTOM_HOSTS: '127.0.0.1', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
    { mcpDirectory: `127.0.0.1:${port}` },
  ));
});

after(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await close?.();
  await directory?.close();
  await fake?.close();
  await receiver?.close();
});

async function connect(key: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'through-gateway', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${h.url}/mcp/crm`), {
      requestInit: { headers: { authorization: `Bearer ${key}`, ...headers } },
    }),
  );
  clients.push(client);
  return client;
}

describe('the MCP gateway in the gateway service', () => {
  test('a gateway key lists and calls tools; the upstream gets its own token, never the key', async () => {
    const client = await connect(KEY);
    const tools = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(tools.includes('echo'));
    const result = await client.callTool({ name: 'echo', arguments: { text: 'through' } });
    assert.deepEqual(result.content, [{ type: 'text', text: 'through' }]);
    for (const request of fake.requests) {
      assert.equal(request.headers.authorization, 'Bearer upstream-token-1');
      assert.ok(!JSON.stringify(request.headers).includes(KEY));
    }
    const logged = await eventually(() => {
      const found = h.bus
        .log(Topics.requestLogs)
        .map((m) => fromBinary(events.RequestLogEventSchema, m.value))
        .filter((e) => e.mcp?.toolName === 'echo');
      return found.length > 0 ? found : undefined;
    });
    assert.equal(logged.length, 1);
    assert.equal(logged[0]!.organisationId, principal.organisationId);
    assert.equal(logged[0]!.mcp?.serverId, route.id);
  });

  test("with tracing on, a tool call is a span of the caller's trace, and the upstream is told the trace", async () => {
    const traceId = randomUUID().replaceAll('-', '');
    const client = await connect(KEY, { traceparent: `00-${traceId}-${'1'.repeat(16)}-01` });
    await client.callTool({ name: 'echo', arguments: { text: 'traced' } });
    const span = await eventually(
      async () => {
        await flushTraces();
        return receiver.spans.find((s) => s.traceId === traceId && s.name === 'tools/call echo');
      },
      { what: 'the tool call span' },
    );
    assert.equal(span.kind, 3, 'a client span');
    assert.equal(span.attributes['gen_ai.tool.name'], 'echo');
    assert.equal(span.attributes['mcp.method.name'], 'tools/call');
    const call = fake.requests.findLast((r) => r.body.includes('"traced"'))!;
    assert.match(String(call.headers.traceparent), new RegExp(`^00-${traceId}-`));
  });

  test('an unknown key: 401 with the challenge', async () => {
    const res = await fetch(`${h.url}/mcp/crm`, {
      method: 'POST',
      headers: { authorization: 'Bearer sy-not-a-key', 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    assert.equal(res.status, 401);
    assert.match(
      res.headers.get('www-authenticate') ?? '',
      /^Bearer resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp\/crm", scope="agents\.invoke", error="invalid_token"$/,
    );
    const metadata = await fetch(`${h.url}/.well-known/oauth-protected-resource/mcp/crm`);
    assert.equal(metadata.status, 200);
  });

  test('a change event naming the organisation drops the server: a tool switched off is refused at once', async () => {
    const client = await connect(KEY);
    route = { ...route, disabledTools: ['echo'] };
    publishEvent(h.bus, Topics.changes, events.ChangeEventSchema, principal.organisationId, {
      id: randomUUID(),
      entity: 'mcp_server',
      entityId: String(route.id),
      organisationId: principal.organisationId,
      workspaceId: principal.workspaceId ?? '',
      occurredAtMs: String(Date.now()),
    });
    const deadline = Date.now() + 5_000;
    for (;;) {
      const refused = await client.callTool({ name: 'echo', arguments: { text: 'x' } }).then(
        () => undefined,
        (err: unknown) => err,
      );
      if (refused instanceof McpError) {
        assert.equal(refused.code, McpGatewayError.Forbidden);
        break;
      }
      assert.ok(Date.now() < deadline, 'the change was not seen in time');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
});
