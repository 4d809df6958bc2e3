import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { createLogger } from '@switchyard/core';
import type { Principal } from '@switchyard/access';
import { Topics, publishEvent } from '@switchyard/adapters';
import { GrpcServer } from '@switchyard/runtime';
import { events, guardrails, mcp } from '@switchyard/proto';
import { startFakeMcpServer, type FakeMcp, type ServiceHarness } from '@switchyard/testing';
import { newPrincipal, startGatewayWithStandIns } from '../testing/policy-stand-ins.ts';

// A rotated secret reaches the gateway: control-plane (a stand-in here) hands out the values
// its secret mappings resolve to; a "secret_reference" change event of the organisation drops
// the guardrails and MCP servers the gateway holds, so the next call sends the new value.

const logger = createLogger('test');
logger.silent = true;

const KEY = 'sy-secret-rotation-key-0000000000000';
const principal: Principal = newPrincipal();
const guardrailId = randomUUID();

/** What control-plane's secret mappings resolve to right now. */
const resolved = {
  hookKey: 'hook-value-1',
  upstreamKey: 'upstream-value-1',
  /** Set when the mappings cannot be resolved: control-plane marks the webhook check so. */
  unavailable: undefined as string | undefined,
};

let h: ServiceHarness;
let close: () => Promise<void>;
let upstream: FakeMcp;
let webhook: Server;
let webhookUrl: string;
const webhookSeen: IncomingHttpHeaders[] = [];
let standIn: GrpcServer;
const clients: Client[] = [];

before(async () => {
  upstream = await startFakeMcpServer();
  webhook = createServer((req, res) => {
    webhookSeen.push(req.headers);
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"verdict":true}'));
  });
  await new Promise<void>((resolve) => webhook.listen(0, '127.0.0.1', resolve));
  const address = webhook.address();
  assert.ok(address && typeof address === 'object');
  webhookUrl = `http://127.0.0.1:${address.port}/verdict`;

  const route = (): MessageInitShape<typeof mcp.McpServerRouteSchema> => ({
    id: randomUUID(),
    slug: 'vault-crm',
    name: 'CRM',
    organisationId: principal.organisationId,
    workspaceId: principal.workspaceId!,
    integrationSlug: 'vault-crm-tools',
    url: upstream.endpoint,
    auth: { type: 'headers', headers: { 'x-upstream-key': resolved.upstreamKey } },
    enabled: true,
    defaultToolAccess: 'allow',
    defaultKeyAccess: 'allow',
    defaultUserAccess: 'allow',
    inputGuardrails: [guardrailId],
  });
  standIn = new GrpcServer({ logger, security: {} })
    .add(
      mcp.McpDirectoryService,
      {
        getMcpServer: async ({ organisationId, idOrSlug }) =>
          organisationId === principal.organisationId && idOrSlug === 'vault-crm' ? { server: route() } : {},
      },
      { getMcpServer: ['gateway'] },
    )
    .add(
      guardrails.GuardrailDirectoryService,
      {
        listGuardrails: async ({ organisationId }) => ({
          guardrails:
            organisationId === principal.organisationId
              ? [
                  {
                    id: guardrailId,
                    slug: 'vault-hook',
                    organisationId,
                    workspaceId: '',
                    versionId: randomUUID(),
                    name: 'Vault hook',
                    checksJson: JSON.stringify([
                      {
                        id: 'default.webhook',
                        parameters: {
                          webhookURL: webhookUrl,
                          headers: resolved.unavailable ? {} : { 'x-hook-key': resolved.hookKey },
                        },
                        ...(resolved.unavailable ? { unavailable: resolved.unavailable } : {}),
                      },
                    ]),
                    actionsJson: JSON.stringify({ deny: true }),
                  },
                ]
              : [],
        }),
      },
      { listGuardrails: ['gateway', 'admin'] },
    );
  const port = await standIn.listen('127.0.0.1', 0);
  ({ h, close } = await startGatewayWithStandIns(
    new Map([[KEY, principal]]),
    { TRUSTED_CUSTOM_HOSTS: '127.0.0.1' },
    { mcpDirectory: `127.0.0.1:${port}`, guardrailDirectory: `127.0.0.1:${port}` },
  ));
});

after(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await close?.();
  await standIn?.close();
  await upstream?.close();
  await new Promise((resolve) => webhook?.close(resolve));
});

async function connect(): Promise<Client> {
  const client = new Client({ name: 'rotation', version: '1.0.0' });
  clients.push(client);
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${h.url}/mcp/vault-crm`), {
      requestInit: { headers: { authorization: `Bearer ${KEY}` } },
    }),
  );
  return client;
}

function secretReferenceChanged(): void {
  publishEvent(h.bus, Topics.changes, events.ChangeEventSchema, principal.organisationId, {
    id: randomUUID(),
    entity: 'secret_reference',
    entityId: randomUUID(),
    organisationId: principal.organisationId,
    workspaceId: '',
    action: events.ChangeAction.UPDATED,
    occurredAtMs: String(Date.now()),
  });
}

/** Calls `echo` through the gateway on a new MCP session; answers what the webhook and the upstream were sent. */
async function callEcho(): Promise<{ hookKey: unknown; upstreamKey: unknown }> {
  const client = await connect();
  const text = `rotation-${randomUUID()}`;
  const result = await client.callTool({ name: 'echo', arguments: { text } });
  assert.deepEqual(result.content, [{ type: 'text', text }]);
  const call = upstream.requests.findLast((r) => r.body.includes(text));
  assert.ok(call, 'the call reached the upstream');
  return { hookKey: webhookSeen.at(-1)?.['x-hook-key'], upstreamKey: call.headers['x-upstream-key'] };
}

describe('a secret_reference change event', () => {
  test('drops the cached guardrails and MCP servers of the organisation: the next call sends the rotated values', async () => {
    assert.deepEqual(await callEcho(), { hookKey: 'hook-value-1', upstreamKey: 'upstream-value-1' });

    resolved.hookKey = 'hook-value-2';
    resolved.upstreamKey = 'upstream-value-2';
    assert.deepEqual(
      await callEcho(),
      { hookKey: 'hook-value-1', upstreamKey: 'upstream-value-1' },
      'without an event the gateway serves what it holds',
    );

    secretReferenceChanged();
    const deadline = Date.now() + 1_000;
    let seen = await callEcho();
    while (seen.hookKey !== 'hook-value-2' || seen.upstreamKey !== 'upstream-value-2') {
      assert.ok(Date.now() < deadline, `the rotation was not seen within a second: ${JSON.stringify(seen)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
      seen = await callEcho();
    }
  });

  test('a webhook check whose secrets cannot be had answers as an unreachable webhook: fail-closed denies, uncalled', async () => {
    resolved.unavailable = "its secret mappings cannot be resolved: secret reference 'vault-key' not found.";
    try {
      secretReferenceChanged();
      const client = await connect();
      const deadline = Date.now() + 1_000;
      for (;;) {
        const calledBefore = webhookSeen.length;
        const outcome = await client.callTool({ name: 'echo', arguments: { text: 'x' } }).then(
          (result) => (result.isError ? JSON.stringify(result.content) : undefined),
          (err: unknown) => String(err),
        );
        if (outcome !== undefined) {
          assert.equal(webhookSeen.length, calledBefore, 'the webhook was not called');
          assert.match(outcome, /denied by its guardrails/);
          assert.match(outcome, /the webhook cannot be called: its secret mappings cannot be resolved/);
          break;
        }
        assert.ok(Date.now() < deadline, 'the unavailable webhook check still passed after a second');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      resolved.unavailable = undefined;
    }
  });
});
