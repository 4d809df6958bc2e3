import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { adminService } from '@switchyard/admin';
import { controlPlane } from '@switchyard/control-plane';
import { logExportService } from '@switchyard/log-export';
import { policyService } from '@switchyard/policy';
import type { ServiceDefinition } from '@switchyard/runtime';
import {
  eventually,
  startFakeMcpServer,
  type FakeMcp,
  type HarnessResponse,
  type ServiceHarness,
  startServiceHarness,
} from '@switchyard/testing';
import { gatewayService } from '../service.ts';
import { McpGatewayError } from './errors.ts';

// The "done when": the official MCP TypeScript SDK as the client, through every service
// as deployed (control-plane's MCP servers, the policy service's limits, guardrails, the
// authorization server), against a fake MCP server built with the same SDK.

const services = [
  controlPlane,
  policyService,
  adminService,
  logExportService,
  gatewayService,
] as ServiceDefinition[];

const UPSTREAM_HEADER = { name: 'x-upstream-key', value: 'upstream-secret-0123456789' };
const REDIRECT = 'http://127.0.0.1:7777/callback';

let h: ServiceHarness;
let fake: FakeMcp;
/** A member of the workspace and their user key: who approves the OAuth client. */
let member: { id: string; key: string };
const clients: Client[] = [];

async function ok<T = HarnessResponse['body']>(
  method: 'GET' | 'POST' | 'PUT',
  path: string,
  json?: unknown,
  key = h.adminKey,
): Promise<T> {
  const res = await h.request(method, path, { key, ...(json === undefined ? {} : { json }) });
  assert.ok(res.status >= 200 && res.status < 300, `${method} ${path}: ${res.status} ${res.text}`);
  return res.body as T;
}

/** The MCP server `crm` as an MCP client reaches it through the gateway. */
const serverUrl = () => new URL(`${h.url}/mcp/crm`);

async function connect(options: ConstructorParameters<typeof StreamableHTTPClientTransport>[1]) {
  const client = new Client({ name: 'switchyard-test', version: '1.0.0' });
  clients.push(client);
  await client.connect(new StreamableHTTPClientTransport(serverUrl(), options));
  return client;
}

const withKey = (key: string) => connect({ requestInit: { headers: { authorization: `Bearer ${key}` } } });

/** The MCP error a call was refused with. */
async function refusal(call: Promise<unknown>): Promise<McpError> {
  try {
    await call;
  } catch (err) {
    assert.ok(err instanceof McpError, `expected an McpError, got ${String(err)}`);
    return err;
  }
  assert.fail('the call was not refused');
}

before(async () => {
  fake = await startFakeMcpServer({ requireHeader: UPSTREAM_HEADER });
  h = await startServiceHarness({
    services,
    env: { TRUSTED_CUSTOM_HOSTS: '127.0.0.1', MCP_SYNC_INTERVAL_SECONDS: '0' },
  });

  // Guardrails of the organisation: one refuses SQL in a tool's arguments, one replaces email
  // addresses in a tool's results.
  const noSql = await ok('POST', '/v1/guardrails', {
    name: 'No SQL in tool arguments',
    actions: { deny: true },
    checks: [
      { id: 'default.regexMatch', parameters: { rule: '\\bDROP\\s+TABLE\\b', flags: 'i', not: true } },
    ],
  });
  const noEmails = await ok('POST', '/v1/guardrails', {
    name: 'No email addresses in tool results',
    actions: { redact: true },
    checks: [{ id: 'default.pii', parameters: { categories: ['email'] } }],
  });

  // The upstream, its capabilities read, and a server of the workspace in front of it.
  const integration = await ok('POST', '/v2/mcp-integrations', {
    name: 'CRM tools',
    slug: 'crm-tools',
    url: fake.endpoint,
    auth_type: 'headers',
    transport: 'http',
    workspace_id: h.workspaceId,
    configurations: { custom_headers: { [UPSTREAM_HEADER.name]: UPSTREAM_HEADER.value } },
  });
  const synced = await ok('POST', `/v2/mcp-integrations/${integration.id}/sync`);
  assert.equal(synced.sync_status, 'synced', JSON.stringify(synced));
  const server = await ok('POST', '/v2/mcp-servers', {
    name: 'CRM',
    slug: 'crm',
    mcp_integration_id: integration.id,
    workspace_id: h.workspaceId,
    input_guardrails: [noSql.slug],
    output_guardrails: [noEmails.slug],
  });
  // The workspace switches `add` off; the workspace key may not call `fail`.
  await ok('PUT', `/v2/mcp-servers/${server.id}/capabilities`, {
    capabilities: [{ name: 'add', type: 'tool', enabled: false }],
  });
  const keys = await ok<{ data: Array<{ id: string; key?: string; name: string }> }>(
    'GET',
    `/v2/api-keys?workspace_id=${h.workspaceId}`,
  );
  const workspaceKeyId = (
    await ok<{ data: Array<{ id: string }> }>('GET', '/v2/api-keys', undefined, h.workspaceKey)
  ).data[0]?.id;
  assert.ok(keys.data.length > 0 && workspaceKeyId);
  await ok('PUT', `/v2/mcp-servers/${server.id}/key-access`, {
    key_access: [{ api_key_id: workspaceKeyId, enabled: true, denied_tools: ['fail'] }],
  });
  // Two calls of `echo` a minute per key.
  await ok('POST', '/v2/policies/rate-limits', {
    name: 'Two echoes a minute per key',
    type: 'requests',
    unit: 'rpm',
    value: 2,
    target: 'mcp_tools',
    conditions: [
      { key: 'mcp_server', value: 'crm' },
      { key: 'tool_name', value: 'echo' },
    ],
    group_by: [{ key: 'api_key' }],
  });

  // A workspace member, to approve an MCP client's access.
  const user = await ok('POST', '/v1/admin/users', {
    email: 'grace@example.com',
    first_name: 'Grace',
    last_name: 'Hopper',
    role: 'member',
  });
  await ok('POST', `/v1/admin/workspaces/${h.workspaceId}/users`, {
    users: [{ id: user.id, role: 'member' }],
  });
  const userKey = await ok('POST', '/v2/api-keys/workspace/user', {
    name: 'Grace',
    workspace_id: h.workspaceId,
    user_id: user.id,
  });
  member = { id: user.id, key: userKey.key };
});

after(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await h?.close();
  await fake?.close();
});

describe('the official MCP client through the gateway', () => {
  test('lists the tools the key may call: one switched off by the workspace and one denied to the key are hidden', async () => {
    const client = await withKey(h.workspaceKey);
    assert.equal(client.getServerVersion()?.name, 'fake-mcp');
    const names = (await client.listTools()).tools.map((t) => t.name).sort();
    assert.deepEqual(names, ['echo', 'lookup_customer', 'notify']);
    // The upstream had the integration's header; the caller's key never reached it.
    const seen = fake.requests.at(-1)!;
    assert.equal(seen.headers[UPSTREAM_HEADER.name], UPSTREAM_HEADER.value);
    assert.equal(seen.headers.authorization, undefined);
  });

  test('calls a tool, is refused a denied tool, then is rate-limited with a 429-equivalent MCP error', async () => {
    const client = await withKey(h.workspaceKey);
    const first = await client.callTool({ name: 'echo', arguments: { text: 'hello' } });
    assert.deepEqual(first.content, [{ type: 'text', text: 'hello' }]);

    const before = fake.toolCalls.length;
    for (const tool of ['add', 'fail']) {
      const denied = await refusal(client.callTool({ name: tool, arguments: { a: 1, b: 2 } }));
      assert.equal(denied.code, McpGatewayError.Forbidden, tool);
      assert.equal((denied.data as { status?: number }).status, 403);
    }
    assert.equal(fake.toolCalls.length, before, 'denied tools never reach the upstream');

    await client.callTool({ name: 'echo', arguments: { text: 'again' } });
    const limited = await refusal(client.callTool({ name: 'echo', arguments: { text: 'third' } }));
    assert.equal(limited.code, McpGatewayError.RateLimited);
    const data = limited.data as { status: number; code: string; retry_after_seconds: number };
    assert.equal(data.status, 429);
    assert.equal(data.code, 'rate_limit_exceeded');
    assert.ok(data.retry_after_seconds >= 1 && data.retry_after_seconds <= 60);
    assert.ok(!fake.toolCalls.some((c) => c.arguments.text === 'third'));
    // Another tool is not under that limit.
    const other = await client.callTool({ name: 'lookup_customer', arguments: { id: 'c-1' } });
    assert.equal(other.isError, undefined);
  });

  test("a guardrail denies an argument, another redacts the tool's result", async () => {
    const client = await withKey(h.workspaceKey);
    const before = fake.toolCalls.length;
    const denied = await refusal(
      client.callTool({ name: 'lookup_customer', arguments: { id: "c-1'; DROP TABLE customers; --" } }),
    );
    assert.equal(denied.code, McpGatewayError.GuardrailDenied);
    assert.equal((denied.data as { status: number }).status, 446);
    assert.equal(fake.toolCalls.length, before, 'the denied call never reached the upstream');

    const result = await client.callTool({ name: 'lookup_customer', arguments: { id: 'c-2' } });
    const text = JSON.stringify(result);
    assert.ok(!text.includes('ada@example.com'), text);
    assert.match(text, /Ada Lovelace/);
    assert.match(text, /\+1 415 555 0100/, 'what the guardrail does not look for is kept');
  });

  test('every tool call is on the request log, searchable by server and tool', async () => {
    const logs = await eventually(
      async () => {
        const res = await h.request('GET', '/v1/logs?mcp_server=crm&tool_name=lookup_customer', {
          key: h.workspaceKey,
        });
        const data = (res.body?.data ?? []) as Array<HarnessResponse['body']>;
        return data.length >= 3 ? data : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 200, what: 'the tool calls logged' },
    );
    for (const log of logs) {
      assert.equal(log.mcp.server_slug, 'crm');
      assert.equal(log.mcp.tool_name, 'lookup_customer');
      assert.equal(log.mcp.method, 'tools/call');
    }
    assert.ok(
      logs.some((l) => l.mcp.error_code === McpGatewayError.GuardrailDenied),
      'the denied call is logged with its error',
    );
    const stored = JSON.stringify(logs);
    assert.ok(!stored.includes('ada@example.com'), 'the log keeps the redacted result');
  });
});

/** An MCP client's OAuth state, kept in memory; the authorization URL it would open is recorded. */
class MemoryOAuthProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;

  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'An MCP client',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

describe('an MCP client that authorises itself with OAuth', () => {
  test('discovers the authorization server, registers, is authorised by a member, and calls tools with its token', async () => {
    const provider = new MemoryOAuthProvider();
    const transport = new StreamableHTTPClientTransport(serverUrl(), { authProvider: provider });
    const first = new Client({ name: 'oauth-client', version: '1.0.0' });
    clients.push(first);
    await assert.rejects(first.connect(transport), UnauthorizedError);
    assert.ok(provider.client?.client_id, 'the client registered itself');
    const authorizationUrl = provider.authorizationUrl!;
    assert.equal(`${authorizationUrl.origin}${authorizationUrl.pathname}`, `${h.url}/oauth/authorize`);
    assert.equal(authorizationUrl.searchParams.get('resource'), serverUrl().href);
    assert.match(authorizationUrl.searchParams.get('scope') ?? '', /\bagents\.invoke\b/);

    // The member sees the request and approves it; the redirect carries the code.
    const shown = await h.request('GET', `${authorizationUrl.pathname}${authorizationUrl.search}`, {
      key: member.key,
    });
    assert.equal(shown.status, 200, shown.text);
    const params = authorizationUrl.searchParams;
    const consent = await h.request('POST', '/oauth/postAuthorizeConsent', {
      key: member.key,
      json: {
        client_id: params.get('client_id'),
        redirect_uri: params.get('redirect_uri'),
        scope: shown.body.scope,
        state: params.get('state') ?? undefined,
        code_challenge: params.get('code_challenge'),
        code_challenge_method: params.get('code_challenge_method'),
        resource: params.get('resource'),
        approve: true,
      },
    });
    assert.equal(consent.status, 200, consent.text);
    const code = new URL(consent.body.redirect_to).searchParams.get('code');
    assert.ok(code);
    await transport.finishAuth(code);
    assert.ok(provider.saved?.access_token);

    const client = await connect({ authProvider: provider });
    const names = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(names.includes('lookup_customer'));
    const result = await client.callTool({ name: 'lookup_customer', arguments: { id: 'c-3' } });
    assert.match(JSON.stringify(result), /Ada Lovelace/);

    // The token is good for this server only.
    const elsewhere = await fetch(`${h.url}/mcp/another-server`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${provider.saved!.access_token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    assert.equal(elsewhere.status, 401);
    assert.match(elsewhere.headers.get('www-authenticate') ?? '', /invalid_token/);
  });
});
