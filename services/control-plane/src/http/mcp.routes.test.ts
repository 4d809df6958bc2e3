import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { fromBinary } from '@bufbuild/protobuf';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Topics } from '@switchyard/adapters';
import { events } from '@switchyard/proto';
import {
  startServiceHarness,
  listenOnLoopback,
  type HarnessResponse,
  type ServiceHarness,
} from '@switchyard/testing';
import { z } from 'zod';
import { controlPlane } from '../service.ts';
import { seedOrganisation, type SeededOrganisation } from '../testing/organisations.ts';
import { createWorkspace } from '../testing/workspaces.ts';
import { McpRepository } from '../store/mcp.repository.ts';

const TOKEN = 'upstream-secret-token-1234';

/** A fake upstream MCP server: tools (one of them toggled by `extraTool`), a prompt, a resource; it wants the bearer token. */
interface FakeMcp {
  url: string;
  extraTool: boolean;
  seenAuthorization: string[];
  close(): Promise<void>;
}

async function startFakeMcp(): Promise<FakeMcp> {
  const state = { extraTool: true, seenAuthorization: [] as string[] };
  const build = () => {
    const server = new McpServer({ name: 'fake-upstream', version: '2.3.4' });
    server.registerTool(
      'search',
      { title: 'Search', description: 'Searches the docs', inputSchema: { query: z.string() } },
      async ({ query }) => ({ content: [{ type: 'text', text: `found ${query}` }] }),
    );
    server.registerTool('delete_everything', { description: 'Dangerous' }, async () => ({
      content: [{ type: 'text', text: 'gone' }],
    }));
    if (state.extraTool) {
      server.registerTool('ephemeral', { description: 'Comes and goes' }, async () => ({
        content: [{ type: 'text', text: 'here' }],
      }));
    }
    server.registerPrompt(
      'summarise',
      { description: 'Summarises', argsSchema: { text: z.string() } },
      ({ text }) => ({
        messages: [{ role: 'user', content: { type: 'text', text } }],
      }),
    );
    server.registerResource('readme', 'docs://readme', { mimeType: 'text/markdown' }, async (uri) => ({
      contents: [{ uri: uri.href, text: '# hi' }],
    }));
    server.registerResource(
      'page',
      new ResourceTemplate('docs://pages/{id}', { list: undefined }),
      { description: 'A page' },
      async (uri) => ({ contents: [{ uri: uri.href, text: 'page' }] }),
    );
    return server;
  };
  const http = createServer((req: IncomingMessage, res: ServerResponse) => {
    state.seenAuthorization.push(req.headers.authorization ?? '');
    if (req.headers.authorization !== `Bearer ${TOKEN}`) {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const server = build();
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      server
        .connect(transport)
        .then(() => transport.handleRequest(req, res, text ? JSON.parse(text) : undefined))
        .catch(() => res.destroy());
    });
  });
  const listening = await listenOnLoopback(http);
  return {
    url: `${listening.url}/mcp`,
    get extraTool() {
      return state.extraTool;
    },
    set extraTool(value: boolean) {
      state.extraTool = value;
    },
    seenAuthorization: state.seenAuthorization,
    close: listening.close,
  };
}

interface RegistryBody {
  servers: Array<{ server: { name: string } }>;
  metadata: { nextCursor: string | null };
}
type RegistryAnswer = HarnessResponse<RegistryBody>;

let h: ServiceHarness;
let fake: FakeMcp;
let other: SeededOrganisation;

before(async () => {
  fake = await startFakeMcp();
  h = await startServiceHarness({
    services: [controlPlane],
    env: { TRUSTED_CUSTOM_HOSTS: '127.0.0.1', MCP_SYNC_INTERVAL_SECONDS: '0', MCP_SYNC_TIMEOUT_MS: '5000' },
    // No real resolution: public names answer a public address, `internal.test` a private one.
    resolve: async (hostname) => (hostname.startsWith('internal') ? ['10.1.2.3'] : ['93.184.216.34']),
  });
  other = await seedOrganisation(h.db('control-plane').manager, 'mcp-other');
});
after(async () => {
  await h.close();
  await fake.close();
});

const headersIntegration = (extra: Record<string, unknown> = {}) => ({
  name: 'Docs MCP',
  url: fake.url,
  auth_type: 'headers',
  transport: 'http',
  configurations: { custom_headers: { Authorization: `Bearer ${TOKEN}` }, passthrough_header: ['X-User-Id'] },
  ...extra,
});

async function createIntegration(json: Record<string, unknown>, key = h.adminKey) {
  const res = await h.request('POST', '/v2/mcp-integrations', { key, json });
  assert.equal(res.status, 200, res.text);
  return res.body as { id: string; slug: string };
}

async function syncNow(id: string) {
  const res = await h.request('POST', `/v2/mcp-integrations/${id}/sync`, { key: h.adminKey });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

async function enableFor(id: string, workspaceId: string, enabled = true) {
  const res = await h.request('PUT', `/v2/mcp-integrations/${id}/workspaces`, {
    key: h.adminKey,
    json: { workspaces: [{ id: workspaceId, enabled }] },
  });
  assert.equal(res.status, 200, res.text);
}

async function createServer_(json: Record<string, unknown>, key = h.adminKey) {
  const res = await h.request('POST', '/v2/mcp-servers', { key, json });
  assert.equal(res.status, 200, res.text);
  return res.body as { id: string; slug: string };
}

async function workspaceKeyFor(workspaceId: string) {
  const res = await h.request('POST', '/v2/api-keys/workspace/service', {
    key: h.adminKey,
    json: { name: 'MCP key', workspace_id: workspaceId },
  });
  assert.equal(res.status, 200, res.text);
  return res.body as { id: string; key: string };
}

/** Waits (bounded) for the background sync a create starts. */
async function synced(id: string) {
  for (let i = 0; i < 100; i++) {
    const res = await h.request('GET', `/v2/mcp-integrations/${id}/metadata`, { key: h.adminKey });
    if (res.body.sync_status !== 'pending' && res.body.sync_status !== 'syncing') return res.body;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('the sync did not finish');
}

describe('MCP integrations', () => {
  test('creates with credentials masked in every answer and encrypted in the row, then syncs in the background', async () => {
    const created = await createIntegration(headersIntegration({ slug: 'docs-mcp' }));
    assert.equal(created.slug, 'docs-mcp');
    const got = await h.request('GET', '/v2/mcp-integrations/docs-mcp', { key: h.adminKey });
    assert.equal(got.status, 200, got.text);
    assert.equal(got.body.id, created.id);
    assert.equal(got.body.type, 'organisation');
    assert.deepEqual(got.body.configurations.custom_headers, { Authorization: '********' });
    assert.deepEqual(got.body.configurations.passthrough_header, ['x-user-id']);
    assert.ok(!got.text.includes(TOKEN));
    const listed = await h.request('GET', '/v2/mcp-integrations?page_size=1000', { key: h.adminKey });
    assert.ok(listed.body.data.some((i: { id: string }) => i.id === created.id));
    assert.ok(!listed.text.includes(TOKEN));
    const [row] = await h
      .db('control-plane')
      .query(`SELECT configurations::text AS c FROM control_plane.mcp_integrations WHERE id = $1`, [
        created.id,
      ]);
    assert.ok(!String(row.c).includes(TOKEN), 'the token is stored encrypted');

    const metadata = await synced(created.id);
    assert.equal(metadata.sync_status, 'synced', JSON.stringify(metadata));
    assert.equal(metadata.server_name, 'fake-upstream');
    assert.equal(metadata.server_version, '2.3.4');
    assert.ok(metadata.protocol_version);
    assert.ok(metadata.capability_flags.tools);
    assert.equal(metadata.sync_error, null);
    assert.ok(fake.seenAuthorization.includes(`Bearer ${TOKEN}`));

    const caps = await h.request('GET', `/v2/mcp-integrations/${created.id}/capabilities`, {
      key: h.adminKey,
    });
    assert.equal(caps.status, 200, caps.text);
    assert.deepEqual(caps.body.counts, {
      tools: { total: 3, enabled: 3 },
      prompts: { total: 1, enabled: 1 },
      resources: { total: 1, enabled: 1 },
      resource_templates: { total: 1, enabled: 1 },
    });
    const search = caps.body.data.find((c: { name: string }) => c.name === 'search');
    assert.equal(search.type, 'tool');
    assert.equal(search.title, 'Search');
    assert.equal(search.input_schema.type, 'object');
    const template = caps.body.data.find((c: { type: string }) => c.type === 'resource_template');
    assert.equal(template.uri_template, 'docs://pages/{id}');
    const tools = await h.request(
      'GET',
      `/v2/mcp-integrations/${created.id}/capabilities?type=tool&page_size=2`,
      {
        key: h.adminKey,
      },
    );
    assert.equal(tools.body.data.length, 2);
    assert.equal(tools.body.total, 3);
    assert.equal(tools.body.has_more, true);
  });

  test('a re-sync keeps switches, adds new capabilities and drops vanished ones', async () => {
    fake.extraTool = true;
    const created = await createIntegration(headersIntegration());
    await synced(created.id);
    const off = await h.request('PUT', `/v2/mcp-integrations/${created.id}/capabilities`, {
      key: h.adminKey,
      json: { capabilities: [{ name: 'delete_everything', type: 'tool', enabled: false }] },
    });
    assert.equal(off.status, 200, off.text);
    const unknown = await h.request('PUT', `/v2/mcp-integrations/${created.id}/capabilities`, {
      key: h.adminKey,
      json: { capabilities: [{ name: 'nope', type: 'tool', enabled: false }] },
    });
    assert.equal(unknown.status, 400);
    fake.extraTool = false;
    try {
      const metadata = await syncNow(created.id);
      assert.equal(metadata.sync_status, 'synced');
    } finally {
      fake.extraTool = true;
    }
    const caps = await h.request('GET', `/v2/mcp-integrations/${created.id}/capabilities?type=tool`, {
      key: h.adminKey,
    });
    const byName = Object.fromEntries(
      caps.body.data.map((c: { name: string; enabled: boolean }) => [c.name, c.enabled]),
    );
    assert.deepEqual(byName, { delete_everything: false, search: true });
    await syncNow(created.id);
    const again = await h.request('GET', `/v2/mcp-integrations/${created.id}/capabilities?type=tool`, {
      key: h.adminKey,
    });
    assert.equal(
      again.body.data.find((c: { name: string }) => c.name === 'ephemeral').enabled,
      true,
      'a new capability comes on',
    );
  });

  test('a failed sync keeps a short reason with the credentials masked', async () => {
    const created = await createIntegration(
      headersIntegration({
        configurations: { custom_headers: { Authorization: 'Bearer wrong-secret-value' } },
      }),
    );
    const metadata = await syncNow(created.id);
    assert.equal(metadata.sync_status, 'failed');
    assert.ok(metadata.sync_error.length > 0 && metadata.sync_error.length <= 300);
    assert.ok(!metadata.sync_error.includes('wrong-secret-value'));
  });

  test('an update may send the mask back to keep a header, and a new value replaces it', async () => {
    const created = await createIntegration(headersIntegration());
    const kept = await h.request('PUT', `/v2/mcp-integrations/${created.id}`, {
      key: h.adminKey,
      json: { configurations: { custom_headers: { Authorization: '********' } }, name: 'Renamed' },
    });
    assert.equal(kept.status, 200, kept.text);
    assert.equal((await syncNow(created.id)).sync_status, 'synced');
    const unknownMask = await h.request('PUT', `/v2/mcp-integrations/${created.id}`, {
      key: h.adminKey,
      json: { configurations: { custom_headers: { 'X-Other': '********' } } },
    });
    assert.equal(unknownMask.status, 400);
    assert.equal(unknownMask.body.error.param, 'configurations.custom_headers.X-Other');
  });

  test('bad input is a 400 naming the field; what is not built is a 501', async () => {
    for (const [json, param] of [
      [headersIntegration({ url: 'ftp://example.com/mcp' }), 'url'],
      [headersIntegration({ url: 'not a url' }), 'url'],
      [headersIntegration({ url: 'http://internal.example/mcp' }), 'url'],
      [headersIntegration({ url: 'http://169.254.169.254/mcp' }), 'url'],
      [headersIntegration({ auth_type: 'basic' }), 'auth_type'],
      [headersIntegration({ surprise: true }), 'surprise'],
      [headersIntegration({ configurations: { custom_headers: {} } }), 'configurations.custom_headers'],
      [headersIntegration({ slug: 'bad slug!' }), 'slug'],
      [
        { name: 'cc', url: fake.url, auth_type: 'oauth_client_credentials', transport: 'http' },
        'configurations.token_url',
      ],
    ] as const) {
      const res = await h.request('POST', '/v2/mcp-integrations', { key: h.adminKey, json });
      assert.equal(res.status, 400, `${param}: ${res.text}`);
      assert.equal(res.body.error.param, param, res.text);
    }
    const internal = await h.request('POST', '/v2/mcp-integrations', {
      key: h.adminKey,
      json: headersIntegration({ url: 'http://internal.example/mcp' }),
    });
    assert.equal(internal.body.error.code, 'unsafe_custom_host');
    const oauthAuto = await h.request('POST', '/v2/mcp-integrations', {
      key: h.adminKey,
      json: headersIntegration({ auth_type: 'oauth_auto' }),
    });
    assert.equal(oauthAuto.status, 501);
    assert.match(oauthAuto.body.error.message, /not built/);
    const sse = await h.request('POST', '/v2/mcp-integrations', {
      key: h.adminKey,
      json: headersIntegration({ transport: 'sse' }),
    });
    assert.equal(sse.status, 501);
    await createIntegration(headersIntegration({ slug: 'taken-slug' }));
    const taken = await h.request('POST', '/v2/mcp-integrations', {
      key: h.adminKey,
      json: headersIntegration({ slug: 'taken-slug' }),
    });
    assert.equal(taken.status, 409);
  });

  test('oauth_client_credentials: the secret is masked, and the sync sends the token it fetched', async () => {
    const tokenServer = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
        const ok =
          form.get('client_secret') === 'cc-secret-value' && form.get('grant_type') === 'client_credentials';
        res
          .writeHead(ok ? 200 : 401, { 'content-type': 'application/json' })
          .end(
            JSON.stringify(ok ? { access_token: TOKEN, token_type: 'bearer' } : { error: 'invalid_client' }),
          );
      });
    });
    const token = await listenOnLoopback(tokenServer);
    try {
      const created = await createIntegration({
        name: 'CC',
        url: fake.url,
        auth_type: 'oauth_client_credentials',
        transport: 'http',
        configurations: {
          token_url: `${token.url}/token`,
          client_id: 'cid',
          client_secret: 'cc-secret-value',
        },
      });
      const got = await h.request('GET', `/v2/mcp-integrations/${created.id}`, { key: h.adminKey });
      assert.equal(got.body.configurations.client_secret, '********');
      assert.ok(!got.text.includes('cc-secret-value'));
      assert.equal((await syncNow(created.id)).sync_status, 'synced');
    } finally {
      await token.close();
    }
  });

  test('workspace access: a workspace key sees an organisation-level integration only once enabled for its workspace', async () => {
    const workspace = await createWorkspace(h, 'MCP access');
    const key = await workspaceKeyFor(workspace.id);
    const created = await createIntegration(headersIntegration());
    assert.equal(
      (await h.request('GET', `/v2/mcp-integrations/${created.id}`, { key: key.key })).status,
      404,
    );
    await enableFor(created.id, workspace.id);
    assert.equal(
      (await h.request('GET', `/v2/mcp-integrations/${created.id}`, { key: key.key })).status,
      200,
    );
    const access = await h.request('GET', `/v2/mcp-integrations/${created.id}/workspaces`, {
      key: h.adminKey,
    });
    assert.deepEqual(
      access.body.data.map((w: { id: string; enabled: boolean }) => [w.id, w.enabled]),
      [[workspace.id, true]],
    );
    assert.deepEqual(access.body.global_workspace_access, { enabled: false });
    const globally = await h.request('PUT', `/v2/mcp-integrations/${created.id}/workspaces`, {
      key: h.adminKey,
      json: {
        workspaces: [],
        global_workspace_access: { enabled: true },
        override_existing_workspace_access: true,
      },
    });
    assert.equal(globally.status, 200, globally.text);
    const after_ = await h.request('GET', `/v2/mcp-integrations/${created.id}/workspaces`, {
      key: h.adminKey,
    });
    assert.equal(after_.body.total, 0);
    assert.deepEqual(after_.body.global_workspace_access, { enabled: true });
    // A workspace key reads it but cannot change it.
    const change = await h.request('PUT', `/v2/mcp-integrations/${created.id}`, {
      key: key.key,
      json: { name: 'x' },
    });
    assert.equal(change.status, 403);
    // Its own workspace-level integration it manages.
    const own = await createIntegration(headersIntegration(), key.key);
    const ownGot = await h.request('GET', `/v2/mcp-integrations/${own.id}`, { key: key.key });
    assert.equal(ownGot.body.workspace_id, workspace.id);
    assert.equal(ownGot.body.type, 'workspace');
  });

  test('another organisation and another workspace get 404', async () => {
    const elsewhere = await createWorkspace(h, 'MCP elsewhere');
    const created = await createIntegration(headersIntegration({ workspace_id: elsewhere.id }));
    for (const path of [
      `/v2/mcp-integrations/${created.id}`,
      `/v2/mcp-integrations/${created.slug}/metadata`,
      `/v2/mcp-integrations/${created.id}/capabilities`,
    ]) {
      assert.equal((await h.request('GET', path, { key: other.adminKey })).status, 404, path);
      assert.equal((await h.request('GET', path, { key: h.workspaceKey })).status, 404, path);
    }
    const listed = await h.request('GET', '/v2/mcp-integrations?page_size=1000', { key: other.adminKey });
    assert.ok(!listed.body.data.some((i: { id: string }) => i.id === created.id));
    assert.equal(
      (await h.request('DELETE', `/v2/mcp-integrations/${created.id}`, { key: other.adminKey })).status,
      404,
    );
  });
});

describe('MCP servers', () => {
  let integration: { id: string; slug: string };
  let workspace: { id: string; slug: string };
  let key: { id: string; key: string };

  before(async () => {
    workspace = await createWorkspace(h, 'MCP servers');
    key = await workspaceKeyFor(workspace.id);
    integration = await createIntegration(headersIntegration());
    await synced(integration.id);
  });

  test('needs the integration enabled for the workspace, and lists its gateway URL', async () => {
    const refused = await h.request('POST', '/v2/mcp-servers', {
      key: h.adminKey,
      json: { name: 'Docs', mcp_integration_id: integration.id, workspace_id: workspace.id },
    });
    assert.equal(refused.status, 400, refused.text);
    assert.equal(refused.body.error.code, 'mcp_integration_not_enabled');
    await enableFor(integration.id, workspace.id);
    const created = await createServer_({ name: 'Docs', mcp_integration_id: integration.slug }, key.key);
    const got = await h.request('GET', `/v2/mcp-servers/${created.slug}`, { key: key.key });
    assert.equal(got.status, 200, got.text);
    assert.equal(got.body.workspace_id, workspace.id);
    assert.equal(got.body.default_tool_access, 'allow');
    assert.equal(got.body.mcp_integration_details.configurations.custom_headers.Authorization, '********');
    assert.ok(got.body.url.endsWith(`/mcp/${created.slug}`));
    assert.ok(!got.text.includes(TOKEN));
    const listed = await h.request('GET', '/v2/mcp-servers', { key: key.key });
    assert.equal(listed.status, 200);
    const item = listed.body.data.find((s: { id: string }) => s.id === created.id);
    assert.equal(item.mcp_integration_slug, integration.slug);
    assert.equal(item.workspace_slug, workspace.slug);
    assert.ok(!listed.text.includes(TOKEN));
    // Tenancy.
    assert.equal(
      (await h.request('GET', `/v2/mcp-servers/${created.id}`, { key: h.workspaceKey })).status,
      404,
    );
    assert.equal(
      (await h.request('GET', `/v2/mcp-servers/${created.id}`, { key: other.adminKey })).status,
      404,
    );
    const test_ = await h.request('POST', `/v2/mcp-servers/${created.id}/test`, { key: key.key });
    assert.equal(test_.status, 200, test_.text);
    assert.equal(test_.body.success, true);
    assert.equal(test_.body.server_name, 'fake-upstream');
    const connections = await h.request('GET', `/v2/mcp-servers/${created.id}/connections`, { key: key.key });
    assert.deepEqual(connections.body.data, []);
    const disconnect = await h.request('DELETE', `/v2/mcp-servers/${created.id}/connections`, {
      key: key.key,
    });
    assert.equal(disconnect.status, 501);
  });

  test('validates guardrails, costs and key access, and the directory hands gateways all of it', async () => {
    await enableFor(integration.id, workspace.id);
    const guard = await h.request('POST', '/v1/guardrails', {
      key: h.adminKey,
      json: {
        name: 'MCP guard',
        checks: [{ id: 'default.regexMatch', parameters: { rule: 'x' } }],
        actions: { deny: true },
      },
    });
    assert.equal(guard.status, 200, guard.text);
    const badGuard = await h.request('POST', '/v2/mcp-servers', {
      key: key.key,
      json: { name: 'Bad', mcp_integration_id: integration.id, input_guardrails: ['no-such-guard'] },
    });
    assert.equal(badGuard.status, 400);
    assert.equal(badGuard.body.error.param, 'input_guardrails[0]');
    const badCost = await h.request('POST', '/v2/mcp-servers', {
      key: key.key,
      json: { name: 'Bad', mcp_integration_id: integration.id, default_tool_cost: -1 },
    });
    assert.equal(badCost.status, 400);

    const created = await createServer_(
      {
        name: 'Governed',
        mcp_integration_id: integration.id,
        default_tool_access: 'deny',
        input_guardrails: [guard.body.slug],
        output_guardrails: [guard.body.id],
        default_tool_cost: 0.01,
        tool_settings: [{ name: 'search', cost: 0.05, input_guardrails: [guard.body.slug] }],
      },
      key.key,
    );
    const caps = await h.request('PUT', `/v2/mcp-servers/${created.id}/capabilities`, {
      key: key.key,
      json: { capabilities: [{ name: 'search', type: 'tool', enabled: true }] },
    });
    assert.equal(caps.status, 200, caps.text);
    const off = await h.request('PUT', `/v2/mcp-integrations/${integration.id}/capabilities`, {
      key: h.adminKey,
      json: { capabilities: [{ name: 'delete_everything', type: 'tool', enabled: false }] },
    });
    assert.equal(off.status, 200);
    const listedCaps = await h.request('GET', `/v2/mcp-servers/${created.id}/capabilities?type=tool`, {
      key: key.key,
    });
    const byName = Object.fromEntries(
      listedCaps.body.data.map((c: { name: string; enabled: boolean }) => [c.name, c.enabled]),
    );
    assert.deepEqual(byName, { delete_everything: false, ephemeral: false, search: true });

    const foreignKey = await h.request('PUT', `/v2/mcp-servers/${created.id}/key-access`, {
      key: key.key,
      json: { key_access: [{ api_key_id: '00000000-0000-4000-8000-000000000000', enabled: true }] },
    });
    assert.equal(foreignKey.status, 400);
    const keyAccess = await h.request('PUT', `/v2/mcp-servers/${created.id}/key-access`, {
      key: key.key,
      json: {
        default_key_access: 'deny',
        key_access: [{ api_key_id: key.id, enabled: true, allowed_tools: ['search'] }],
      },
    });
    assert.equal(keyAccess.status, 200, keyAccess.text);
    const readBack = await h.request('GET', `/v2/mcp-servers/${created.id}/key-access`, { key: key.key });
    assert.deepEqual(readBack.body, {
      default_key_access: 'deny',
      key_access: [{ api_key_id: key.id, enabled: true, allowed_tools: ['search'], denied_tools: [] }],
    });
    const users = await h.request('PUT', `/v2/mcp-servers/${created.id}/user-access`, {
      key: key.key,
      json: { default_user_access: 'deny' },
    });
    assert.equal(users.status, 200, users.text);
    const usersRead = await h.request('GET', `/v2/mcp-servers/${created.id}/user-access`, { key: key.key });
    assert.equal(usersRead.body.default_user_access, 'deny');

    const directory = h.client('mcpDirectory');
    const { server } = await directory.getMcpServer({
      organisationId: h.organisationId,
      idOrSlug: created.slug,
    });
    assert.ok(server);
    assert.equal(server.id, created.id);
    assert.equal(server.workspaceId, workspace.id);
    assert.equal(server.url, fake.url);
    assert.equal(server.enabled, true);
    assert.equal(server.auth?.type, 'headers');
    assert.deepEqual(server.auth?.headers, { Authorization: `Bearer ${TOKEN}` });
    assert.deepEqual(server.passthroughHeaders, ['x-user-id']);
    assert.equal(server.defaultToolAccess, 'deny');
    assert.deepEqual(server.enabledTools, ['search']);
    assert.deepEqual(server.disabledTools, ['delete_everything']);
    assert.equal(server.defaultKeyAccess, 'deny');
    assert.deepEqual(
      server.keyAccess.map((k) => [k.apiKeyId, k.enabled, k.allowedTools]),
      [[key.id, true, ['search']]],
    );
    assert.equal(server.defaultUserAccess, 'deny');
    assert.deepEqual(server.inputGuardrails, [guard.body.id]);
    assert.deepEqual(server.outputGuardrails, [guard.body.id]);
    assert.equal(server.defaultToolCost, 0.01);
    assert.deepEqual(
      server.tools.map((t) => [t.name, t.hasCost, t.cost, t.inputGuardrails]),
      [['search', true, 0.05, [guard.body.id]]],
    );
    // Another organisation does not find it; disabling the workspace's access disables the server.
    assert.equal(
      (await directory.getMcpServer({ organisationId: other.organisationId, idOrSlug: created.slug })).server,
      undefined,
    );
    await enableFor(integration.id, workspace.id, false);
    const disabled = await directory.getMcpServer({ organisationId: h.organisationId, idOrSlug: created.id });
    assert.equal(disabled.server?.enabled, false);
    await enableFor(integration.id, workspace.id, true);
  });

  test('every write that changes what gateways read announces an mcp_server change', async () => {
    await enableFor(integration.id, workspace.id);
    const changes = () =>
      h.bus
        .log(Topics.changes)
        .map((message) => fromBinary(events.ChangeEventSchema, message.value))
        .filter((change) => change.entity === 'mcp_server');
    const before_ = changes().length;
    const created = await createServer_({ name: 'Announced', mcp_integration_id: integration.id }, key.key);
    await h.request('PUT', `/v2/mcp-servers/${created.id}`, { key: key.key, json: { default_tool_cost: 1 } });
    await h.request('PUT', `/v2/mcp-servers/${created.id}/key-access`, {
      key: key.key,
      json: { default_key_access: 'deny' },
    });
    await h.request('PUT', `/v2/mcp-integrations/${integration.id}`, {
      key: h.adminKey,
      json: { name: 'Renamed' },
    });
    await h.request('DELETE', `/v2/mcp-servers/${created.id}`, { key: key.key });
    const mine = changes()
      .slice(before_)
      .filter((c) => c.entityId === created.id);
    assert.deepEqual(
      mine.map((c) => c.action),
      [
        events.ChangeAction.CREATED,
        events.ChangeAction.UPDATED,
        events.ChangeAction.UPDATED,
        events.ChangeAction.UPDATED,
        events.ChangeAction.DELETED,
      ],
    );
    assert.ok(
      mine.every(
        (c) => c.organisationId === h.organisationId && c.cacheKey === `${h.organisationId}:${created.slug}`,
      ),
    );
    const audited = h.bus
      .log(Topics.audit)
      .map((message) => fromBinary(events.AuditEventSchema, message.value))
      .map((entry) => `${entry.method} ${entry.route}`);
    for (const route of [
      'POST /v2/mcp-servers',
      'PUT /v2/mcp-servers/:id',
      'PUT /v2/mcp-servers/:id/key-access',
      'DELETE /v2/mcp-servers/:id',
      'POST /v2/mcp-integrations',
      'PUT /v2/mcp-integrations/:id/workspaces',
    ]) {
      assert.ok(audited.includes(route), `${route} is audited`);
    }
    const deleteIntegration = await h.request('DELETE', `/v2/mcp-integrations/${integration.id}`, {
      key: h.adminKey,
    });
    assert.equal(deleteIntegration.status, 409, 'servers of other tests still use it');
  });

  test('the registry pages with a stable opaque cursor, and refuses a bad one', async () => {
    const own = await createWorkspace(h, 'MCP registry');
    const ownKey = await workspaceKeyFor(own.id);
    await enableFor(integration.id, own.id);
    const slugs: string[] = [];
    for (let i = 0; i < 5; i++) {
      slugs.push(
        (await createServer_({ name: `Reg ${i}`, mcp_integration_id: integration.id }, ownKey.key)).slug,
      );
    }
    const first = await h.request('GET', '/v2/mcp-registry/servers?limit=2', { key: ownKey.key });
    assert.equal(first.status, 200, first.text);
    assert.equal(first.body.servers.length, 2);
    assert.equal(first.body.metadata.count, 2);
    assert.equal(first.body.servers[0].server.remotes[0].type, 'streamable-http');
    assert.ok(first.body.servers[0].server.remotes[0].url.endsWith(`/mcp/${slugs[0]}`));
    const cursor = first.body.metadata.nextCursor as string;
    assert.ok(cursor);
    // A server created now comes last, and the next page is unchanged by it.
    const late = await createServer_({ name: 'Reg late', mcp_integration_id: integration.id }, ownKey.key);
    const seen = first.body.servers.map((s: { server: { name: string } }) => s.server.name);
    let next: string | null = cursor;
    while (next) {
      const path: string = `/v2/mcp-registry/servers?limit=2&cursor=${encodeURIComponent(next)}`;
      const page: RegistryAnswer = await h.request<RegistryBody>('GET', path, { key: ownKey.key });
      assert.equal(page.status, 200, page.text);
      seen.push(...page.body.servers.map((s) => s.server.name));
      next = page.body.metadata.nextCursor;
    }
    assert.deepEqual(seen, [...slugs, late.slug]);
    const bad = await h.request('GET', '/v2/mcp-registry/servers?cursor=garbage', { key: ownKey.key });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.param, 'cursor');
    const badLimit = await h.request('GET', '/v2/mcp-registry/servers?limit=101', { key: ownKey.key });
    assert.equal(badLimit.status, 400);
    // Another workspace's key sees none of them.
    const others = await h.request('GET', '/v2/mcp-registry/servers?limit=100', { key: h.workspaceKey });
    assert.ok(!others.body.servers.some((s: { server: { name: string } }) => slugs.includes(s.server.name)));
  });
});

describe('the sync schedule', () => {
  test('replicas claim due integrations atomically: none is claimed twice, and a claim is held', async () => {
    const repo = new McpRepository(h.db('control-plane').manager);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await createIntegration(headersIntegration())).id);
    await h
      .db('control-plane')
      .query(
        `UPDATE control_plane.mcp_integrations SET next_sync_at = now() - interval '1 minute' WHERE id = ANY($1)`,
        [ids],
      );
    const claims = await Promise.all([1, 2, 3].map(() => repo.claimDue(1000, 60_000)));
    const claimed = claims.flat().filter((id) => ids.includes(id));
    assert.equal(new Set(claimed).size, claimed.length, 'no integration is claimed twice');
    assert.deepEqual(new Set(claimed), new Set(ids));
    const again = await repo.claimDue(1000, 60_000);
    assert.ok(!again.some((id) => ids.includes(id)), 'a held claim is not claimed again');
  });
});
