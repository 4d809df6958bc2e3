import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startFakeMcpServer, type FakeMcp } from '@switchyard/testing';
import { PolicyRefusal, SKIPPED_HOLD } from '../domain/policy.ts';
import { McpGatewayError } from './errors.ts';
import { loadedGuardrail, mcpPrincipal, startMcpTestGateway, type McpTestGateway } from './testing.ts';

let gw: McpTestGateway;
let upstream: FakeMcp;
let sseUpstream: FakeMcp;
const KEY = 'sk-mcp-test-key';

before(async () => {
  upstream = await startFakeMcpServer({ requireHeader: { name: 'x-upstream-key', value: 'secret-1' } });
  sseUpstream = await startFakeMcpServer({ sse: true });
  gw = await startMcpTestGateway();
  gw.keys.set(KEY, mcpPrincipal());
});
after(async () => {
  await gw?.close();
  await upstream?.close();
  await sseUpstream?.close();
});

beforeEach(() => {
  gw.servers.clear();
  gw.servers.set('tools', {
    id: 'srv-1',
    slug: 'tools',
    name: 'Tools',
    integrationSlug: 'fake-tools',
    url: upstream.endpoint,
    auth: { type: 'headers', headers: { 'x-upstream-key': 'secret-1' } },
    enabled: true,
    defaultToolAccess: 'allow',
    defaultKeyAccess: 'allow',
    defaultUserAccess: 'allow',
    disabledTools: ['add'],
  });
  gw.servers.set('streamed', {
    id: 'srv-2',
    slug: 'streamed',
    name: 'Streamed',
    url: sseUpstream.endpoint,
    enabled: true,
    defaultToolAccess: 'allow',
    defaultKeyAccess: 'allow',
    defaultUserAccess: 'allow',
  });
  gw.policy.decide = async () => SKIPPED_HOLD;
});

/** The MCP error a call rejected with. */
async function mcpError(call: Promise<unknown>): Promise<McpError> {
  try {
    await call;
  } catch (err) {
    assert.ok(err instanceof McpError, `expected an McpError, got ${String(err)}`);
    return err;
  }
  assert.fail('the call was not refused');
}

describe('the MCP gateway, driven by the official MCP client', () => {
  test('initialize passes through with the upstream auth; the session id goes both ways', async () => {
    const before = upstream.requests.length;
    const client = await gw.client('tools', KEY);
    assert.equal(client.getServerVersion()?.name, 'fake-mcp');
    const got = upstream.requests.slice(before);
    assert.ok(got.length >= 2, 'initialize and the initialized notification reached the upstream');
    for (const request of got) {
      assert.equal(request.headers['x-upstream-key'], 'secret-1');
      assert.equal(request.headers.authorization, undefined, "the caller's key never goes upstream");
    }
    // The notification after initialize carries the session the upstream gave.
    const sessionId = got.at(-1)!.headers['mcp-session-id'];
    assert.equal(typeof sessionId, 'string');
    assert.ok(upstream.sessions() >= 1);
    const prompts = await client.listPrompts();
    assert.equal(prompts.prompts[0]?.name, 'greeting');
    assert.equal(upstream.requests.at(-1)!.headers['mcp-session-id'], sessionId);
    assert.ok(upstream.requests.at(-1)!.headers['mcp-protocol-version']);
  });

  test('tools/list hides the tools the caller may not call', async () => {
    const client = await gw.client('tools', KEY);
    const names = (await client.listTools()).tools.map((t) => t.name).sort();
    assert.deepEqual(names, ['echo', 'fail', 'lookup_customer', 'notify']);
  });

  test("a key's rules and an allow-list: only what they allow is listed and callable", async () => {
    const principal = gw.keys.get(KEY)!;
    gw.servers.set('tools', {
      ...gw.servers.get('tools')!,
      defaultToolAccess: 'deny',
      enabledTools: ['echo', 'lookup_customer', 'fail'],
      keyAccess: [{ apiKeyId: principal.apiKeyId, enabled: true, allowedTools: [], deniedTools: ['fail'] }],
    });
    const client = await gw.client('tools', KEY);
    const names = (await client.listTools()).tools.map((t) => t.name).sort();
    assert.deepEqual(names, ['echo', 'lookup_customer']);
    const err = await mcpError(client.callTool({ name: 'fail', arguments: {} }));
    assert.equal(err.code, McpGatewayError.Forbidden);
  });

  test('tools/call is answered by the upstream, and logged with the server, tool and result', async () => {
    const client = await gw.client('tools', KEY);
    const result = await client.callTool({ name: 'echo', arguments: { text: 'hello' } });
    assert.deepEqual(result.content, [{ type: 'text', text: 'hello' }]);
    await waitFor(() => gw.requestLogs().some((e) => e.mcp?.toolName === 'echo'));
    const log = gw.requestLogs().find((e) => e.mcp?.toolName === 'echo')!;
    assert.equal(log.provider, 'mcp');
    assert.equal(log.model, 'echo');
    assert.equal(log.status, 200);
    assert.equal(log.path, '/mcp/tools');
    assert.equal(log.integrationSlug, 'fake-tools');
    assert.equal(log.mcp?.serverSlug, 'tools');
    assert.equal(log.mcp?.method, 'tools/call');
    assert.equal(log.mcp?.errorCode, 0);
    assert.ok(log.mcp?.sessionId);
    assert.deepEqual(JSON.parse(log.requestBody), { text: 'hello' });
    assert.match(log.responseBody, /hello/);
    assert.ok(gw.requestLogs().some((e) => e.mcp?.method === 'initialize'));
  });

  test('a tool that reports failure: its result passes, logged as a tool error', async () => {
    const client = await gw.client('tools', KEY);
    const result = await client.callTool({ name: 'fail', arguments: {} });
    assert.equal(result.isError, true);
    const answered = (e: { mcp?: { toolName: string; errorCode: number } | undefined }) =>
      e.mcp?.toolName === 'fail' && e.mcp.errorCode === 0;
    await waitFor(() => gw.requestLogs().some(answered));
    assert.equal(gw.requestLogs().findLast(answered)!.mcp?.toolError, true);
  });

  test('a disabled tool is refused with -32003 and never reaches the upstream', async () => {
    const client = await gw.client('tools', KEY);
    const calls = upstream.toolCalls.length;
    const err = await mcpError(client.callTool({ name: 'add', arguments: { a: 1, b: 2 } }));
    assert.equal(err.code, McpGatewayError.Forbidden);
    assert.equal((err.data as { status: number }).status, 403);
    assert.equal(upstream.toolCalls.length, calls);
  });

  test('a rate limit refuses the call with -32029 and retry_after_seconds; the upstream never sees it', async () => {
    gw.policy.decide = async () => {
      throw PolicyRefusal.denied(
        'Rate limit of policy pol-1 reached.',
        'rate_limit_exceeded',
        'pol-1',
        7,
        {},
      );
    };
    const client = await gw.client('tools', KEY);
    const calls = upstream.toolCalls.length;
    const err = await mcpError(client.callTool({ name: 'echo', arguments: { text: 'x' } }));
    assert.equal(err.code, McpGatewayError.RateLimited);
    const data = err.data as Record<string, unknown>;
    assert.equal(data.status, 429);
    assert.equal(data.code, 'rate_limit_exceeded');
    assert.equal(data.retry_after_seconds, 7);
    assert.equal(data.policy_id, 'pol-1');
    assert.equal(upstream.toolCalls.length, calls);
    const check = gw.checks.at(-1)!;
    assert.equal(check.target, 'mcp_tools');
    assert.equal(check.mcpServer, 'tools');
    assert.equal(check.toolName, 'echo');
    await waitFor(() => gw.requestLogs().some((e) => e.mcp?.errorCode === McpGatewayError.RateLimited));
    const log = gw.requestLogs().find((e) => e.mcp?.errorCode === McpGatewayError.RateLimited)!;
    assert.equal(log.status, 429);
    assert.equal(log.policy?.decision, 'denied');
    assert.equal(log.policy?.policyId, 'pol-1');
  });

  test('a rate limit answered in JSON carries Retry-After', async () => {
    gw.policy.decide = async () => {
      throw PolicyRefusal.denied('Rate limit reached.', 'rate_limit_exceeded', 'pol-1', 3, {});
    };
    const res = await rawPost('tools', {
      jsonrpc: '2.0',
      id: 9,
      method: 'tools/call',
      params: { name: 'echo', arguments: { text: 'x' } },
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('retry-after'), '3');
    const body = (await res.json()) as { id: number; error: { code: number } };
    assert.equal(body.id, 9);
    assert.equal(body.error.code, McpGatewayError.RateLimited);
  });

  test("the tool's cost is the estimate checked and the amount settled; a usage event carries it", async () => {
    gw.servers.set('tools', {
      ...gw.servers.get('tools')!,
      defaultToolCost: 0.01,
      tools: [{ name: 'lookup_customer', hasCost: true, cost: 0.25 }],
    });
    const client = await gw.client('tools', KEY);
    const settledBefore = gw.settled.length;
    await client.callTool({ name: 'lookup_customer', arguments: { id: 'c1' } });
    assert.deepEqual(gw.checks.at(-1)!.estimate(), { tokens: 0, cost: 0.25 });
    assert.deepEqual(gw.settled.slice(settledBefore), [{ cost: 0.25 }]);
    await client.callTool({ name: 'echo', arguments: { text: 'x' } });
    assert.deepEqual(gw.checks.at(-1)!.estimate(), { tokens: 0, cost: 0.01 });
    await waitFor(() => gw.usageEvents().some((e) => e.model === 'lookup_customer'));
    const usage = gw.usageEvents().find((e) => e.model === 'lookup_customer')!;
    assert.equal(usage.provider, 'mcp');
    assert.equal(usage.cost, 0.25);
    assert.ok(!gw.usageEvents().some((e) => e.model === 'tools/list'), 'requests without cost are no usage');
  });

  test('an input guardrail denies an argument with -32046; the upstream never sees the call', async () => {
    gw.guardrails.set(
      'no-secrets',
      loadedGuardrail(
        'no-secrets',
        [{ id: 'default.contains', parameters: { operator: 'none', words: ['classified'] } }],
        {
          deny: true,
        },
      ),
    );
    gw.servers.set('tools', {
      ...gw.servers.get('tools')!,
      tools: [{ name: 'echo', inputGuardrails: ['no-secrets'] }],
    });
    const client = await gw.client('tools', KEY);
    const calls = upstream.toolCalls.length;
    const err = await mcpError(client.callTool({ name: 'echo', arguments: { text: 'this is classified' } }));
    assert.equal(err.code, McpGatewayError.GuardrailDenied);
    assert.equal((err.data as { status: number }).status, 446);
    assert.match(err.message, /no-secrets/);
    assert.equal(upstream.toolCalls.length, calls);
    // The same tool with a harmless argument goes through.
    const ok = await client.callTool({ name: 'echo', arguments: { text: 'this is fine' } });
    assert.deepEqual(ok.content, [{ type: 'text', text: 'this is fine' }]);
  });

  test('an input guardrail redacts arguments: the upstream and the log get the redacted text', async () => {
    gw.guardrails.set(
      'pii-in',
      loadedGuardrail('pii-in', [{ id: 'default.pii', parameters: { categories: ['email'] } }], {
        redact: true,
      }),
    );
    gw.servers.set('tools', { ...gw.servers.get('tools')!, inputGuardrails: ['pii-in'] });
    const client = await gw.client('tools', KEY);
    const result = await client.callTool({ name: 'echo', arguments: { text: 'mail bob@example.com now' } });
    const text = (result.content as Array<{ text: string }>)[0]!.text;
    assert.doesNotMatch(text, /bob@example\.com/);
    assert.doesNotMatch(JSON.stringify(upstream.toolCalls.at(-1)!.arguments), /bob@example\.com/);
    await waitFor(() => gw.requestLogs().some((e) => e.model === 'echo' && e.guardrails.length > 0));
    const log = gw.requestLogs().findLast((e) => e.model === 'echo' && e.guardrails.length > 0)!;
    assert.doesNotMatch(log.requestBody, /bob@example\.com/);
    assert.equal(log.guardrails[0]?.action, 'redact');
  });

  test("an output guardrail redacts the result's text and structured content", async () => {
    gw.guardrails.set(
      'pii-out',
      loadedGuardrail('pii-out', [{ id: 'default.pii', parameters: { categories: ['email', 'phone'] } }], {
        redact: true,
      }),
    );
    gw.servers.set('tools', { ...gw.servers.get('tools')!, outputGuardrails: ['pii-out'] });
    const client = await gw.client('tools', KEY);
    const result = await client.callTool({ name: 'lookup_customer', arguments: { id: 'c1' } });
    const text = (result.content as Array<{ text: string }>)[0]!.text;
    assert.match(text, /Ada Lovelace/);
    assert.doesNotMatch(text, /ada@example\.com/);
    assert.doesNotMatch(text, /555 0100/);
    const structured = result.structuredContent as Record<string, string>;
    assert.equal(structured.name, 'Ada Lovelace');
    assert.doesNotMatch(structured.email!, /ada@example\.com/);
    await waitFor(() => gw.requestLogs().some((e) => e.model === 'lookup_customer'));
    assert.doesNotMatch(
      gw.requestLogs().findLast((e) => e.model === 'lookup_customer')!.responseBody,
      /ada@example/,
    );
  });

  test('an output guardrail that denies refuses the result with -32046', async () => {
    gw.guardrails.set(
      'no-pii-out',
      loadedGuardrail('no-pii-out', [{ id: 'default.pii', parameters: { categories: ['email'] } }], {
        deny: true,
      }),
    );
    gw.servers.set('tools', { ...gw.servers.get('tools')!, outputGuardrails: ['no-pii-out'] });
    const client = await gw.client('tools', KEY);
    const err = await mcpError(client.callTool({ name: 'lookup_customer', arguments: { id: 'c1' } }));
    assert.equal(err.code, McpGatewayError.GuardrailDenied);
    assert.doesNotMatch(JSON.stringify(err.data), /ada@example/);
  });

  test('SSE answers: notifications pass, the answer is governed, the stream is relayed', async () => {
    gw.guardrails.set(
      'pii-out-2',
      loadedGuardrail('pii-out-2', [{ id: 'default.pii', parameters: { categories: ['email'] } }], {
        redact: true,
      }),
    );
    gw.servers.set('streamed', { ...gw.servers.get('streamed')!, outputGuardrails: ['pii-out-2'] });
    const client = await gw.client('streamed', KEY);
    const logs: unknown[] = [];
    client.setNotificationHandler(
      (await import('@modelcontextprotocol/sdk/types.js')).LoggingMessageNotificationSchema,
      (n) => {
        logs.push(n.params.data);
      },
    );
    const notified = await client.callTool({ name: 'notify', arguments: { text: 'hi' } });
    assert.deepEqual(notified.content, [{ type: 'text', text: 'notified: hi' }]);
    assert.deepEqual(logs, ['notifying: hi']);
    const looked = await client.callTool({ name: 'lookup_customer', arguments: { id: 'c2' } });
    assert.doesNotMatch(JSON.stringify(looked), /ada@example\.com/);
    const answer = await rawPost(
      'streamed',
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: initializeParams() },
      { accept: 'application/json, text/event-stream' },
    );
    assert.match(answer.headers.get('content-type') ?? '', /text\/event-stream/);
    assert.ok(answer.headers.get('mcp-session-id'));
    assert.match(await answer.text(), /^event: message\ndata: \{"result":\{"protocolVersion"/m);
  });

  test('a caller of another workspace does not find the server (-32004, 404)', async () => {
    gw.keys.set('sk-other-ws', mcpPrincipal({ workspaceId: 'ws-2' }));
    const res = await rawPost(
      'tools',
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: initializeParams() },
      {
        authorization: 'Bearer sk-other-ws',
      },
    );
    assert.equal(res.status, 404);
    const body = (await res.json()) as { error: { code: number; message: string } };
    assert.equal(body.error.code, McpGatewayError.NotFound);
    const missing = await rawPost('nothing-here', { jsonrpc: '2.0', id: 1, method: 'ping' });
    assert.equal(missing.status, 404);
    assert.deepEqual(
      ((await missing.json()) as { error: { code: number } }).error.code,
      McpGatewayError.NotFound,
    );
  });

  test('a server switched off, or a key without access: everything is refused (403)', async () => {
    gw.servers.set('tools', { ...gw.servers.get('tools')!, enabled: false });
    const res = await rawPost('tools', { jsonrpc: '2.0', id: 1, method: 'ping' });
    assert.equal(res.status, 403);
    assert.equal(((await res.json()) as { error: { code: number } }).error.code, McpGatewayError.Forbidden);
    gw.servers.set('tools', { ...gw.servers.get('tools')!, enabled: true, defaultKeyAccess: 'deny' });
    const calls = upstream.requests.length;
    const denied = await rawPost('tools', {
      jsonrpc: '2.0',
      id: 'call-1',
      method: 'tools/call',
      params: { name: 'echo', arguments: { text: 'x' } },
    });
    assert.equal(denied.status, 403);
    assert.equal(((await denied.json()) as { id: string }).id, 'call-1');
    assert.equal(upstream.requests.length, calls);
    await waitFor(() => gw.requestLogs().some((e) => e.status === 403 && e.model === 'echo'));
    const log = gw.requestLogs().findLast((e) => e.status === 403 && e.model === 'echo')!;
    assert.equal(log.mcp?.errorCode, McpGatewayError.Forbidden);
    assert.equal(log.requestBody, '', 'arguments no guardrail has seen are not logged');
  });

  test('without agents.invoke: 403 with the insufficient_scope challenge', async () => {
    gw.keys.set('sk-no-scope', mcpPrincipal({ scopes: ['completions.write'] }));
    const res = await rawPost(
      'tools',
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { authorization: 'Bearer sk-no-scope' },
    );
    assert.equal(res.status, 403);
    assert.match(res.headers.get('www-authenticate') ?? '', /error="insufficient_scope"/);
    assert.equal(((await res.json()) as { error: { type: string } }).error.type, 'permission_error');
  });
});

describe('sessions, the event stream and metrics', () => {
  test("GET relays the server's event stream until the client goes; DELETE ends the session upstream", async () => {
    const init = await rawPost('tools', {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: initializeParams(),
    });
    assert.equal(init.status, 200);
    const sessionId = init.headers.get('mcp-session-id')!;
    assert.ok(sessionId);
    await init.text();
    const session = {
      authorization: `Bearer ${KEY}`,
      'mcp-session-id': sessionId,
      'mcp-protocol-version': '2025-06-18',
    };
    const initialized = await fetch(`${gw.url}/mcp/tools`, {
      method: 'POST',
      headers: {
        ...session,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    assert.equal(initialized.status, 202);
    const controller = new AbortController();
    const stream = await fetch(`${gw.url}/mcp/tools`, {
      headers: { ...session, accept: 'text/event-stream' },
      signal: controller.signal,
    });
    assert.equal(stream.status, 200);
    assert.match(stream.headers.get('content-type') ?? '', /text\/event-stream/);
    const got = upstream.requests.findLast((r) => r.method === 'GET')!;
    assert.equal(got.headers['mcp-session-id'], sessionId);
    assert.equal(got.headers['x-upstream-key'], 'secret-1');
    controller.abort();
    const sessions = upstream.sessions();
    const ended = await fetch(`${gw.url}/mcp/tools`, { method: 'DELETE', headers: session });
    assert.equal(ended.status, 200);
    assert.equal(upstream.sessions(), sessions - 1);
    // The session is gone upstream: the client is told so (404), as the transport says.
    const gone = await rawPost(
      'tools',
      { jsonrpc: '2.0', id: 2, method: 'ping' },
      { 'mcp-session-id': sessionId },
    );
    assert.equal(gone.status, 404);
  });

  test('a session is bound to the caller that began it: another key presenting its id is told it does not exist', async () => {
    gw.keys.set('sk-other-caller', mcpPrincipal({ apiKeyId: 'key-other', name: 'other' }));
    const init = await rawPost('tools', {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: initializeParams(),
    });
    assert.equal(init.status, 200);
    const sessionId = init.headers.get('mcp-session-id')!;
    await init.text();
    const calls = upstream.requests.length;
    const stolen = await rawPost(
      'tools',
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { authorization: 'Bearer sk-other-caller', 'mcp-session-id': sessionId },
    );
    assert.equal(stolen.status, 404);
    const body = (await stolen.json()) as { error: { code: number; data: { code: string } } };
    assert.equal(body.error.code, McpGatewayError.NotFound);
    assert.equal(body.error.data.code, 'mcp_session_not_found');
    assert.equal(upstream.requests.length, calls, 'the upstream never saw the request');
    const made = await rawPost(
      'tools',
      { jsonrpc: '2.0', id: 3, method: 'tools/list' },
      { 'mcp-session-id': sessionId },
    );
    assert.equal(made.status, 200, 'the caller that began it goes on');
    const unknown = await rawPost(
      'tools',
      { jsonrpc: '2.0', id: 4, method: 'tools/list' },
      { 'mcp-session-id': 'not-a-session-the-gateway-saw' },
    );
    assert.equal(unknown.status, 404);
  });

  test('MCP calls are counted by server, method and outcome; tool names are no label', async () => {
    const client = await gw.client('tools', KEY);
    await client.callTool({ name: 'echo', arguments: { text: 'count me' } });
    await mcpError(client.callTool({ name: 'add', arguments: { a: 1, b: 2 } }));
    const text = await gw.metrics.getSingleMetricAsString('switchyard_gateway_mcp_calls_total');
    assert.match(text, /method="tools\/call",outcome="ok"/);
    assert.match(text, /server="tools",method="tools\/call",outcome="forbidden"/);
    assert.doesNotMatch(text, /echo/);
    const duration = await gw.metrics.getSingleMetricAsString('switchyard_gateway_mcp_call_duration_seconds');
    assert.match(duration, /method="initialize"/);
  });
});

describe('authentication and protected-resource metadata', () => {
  test('no credentials: 401 with a challenge naming the metadata; the SDK client sees it', async () => {
    const res = await rawPost('tools', { jsonrpc: '2.0', id: 1, method: 'ping' }, { authorization: '' });
    assert.equal(res.status, 401);
    assert.equal(((await res.json()) as { error: { type: string } }).error.type, 'authentication_error');
    const challenge = res.headers.get('www-authenticate') ?? '';
    assert.equal(
      challenge,
      `Bearer resource_metadata="${gw.url}/.well-known/oauth-protected-resource/mcp/tools", scope="agents.invoke"`,
    );
    await assert.rejects(gw.client('tools'), (err: unknown) => {
      assert.ok(err instanceof StreamableHTTPError, String(err));
      assert.equal(err.code, 401);
      return true;
    });
  });

  test('a wrong key: 401 invalid_token', async () => {
    const res = await rawPost(
      'tools',
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { authorization: 'Bearer sk-wrong' },
    );
    assert.equal(res.status, 401);
    assert.match(res.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
  });

  test("an OAuth token issued for another server's URL: 401 invalid_token; for this one: admitted", async () => {
    gw.keys.set(
      'oauth-other',
      mcpPrincipal({ authMethod: 'oauth', oauthClientId: 'c1', oauthResource: `${gw.url}/mcp/other` }),
    );
    gw.keys.set(
      'oauth-this',
      mcpPrincipal({ authMethod: 'oauth', oauthClientId: 'c1', oauthResource: `${gw.url}/mcp/tools` }),
    );
    const refused = await rawPost(
      'tools',
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { authorization: 'Bearer oauth-other' },
    );
    assert.equal(refused.status, 401);
    assert.match(refused.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
    const client = await gw.client('tools', 'oauth-this');
    assert.ok((await client.listTools()).tools.length > 0);
  });

  test('the metadata document (RFC 9728), public', async () => {
    const res = await fetch(`${gw.url}/.well-known/oauth-protected-resource/mcp/tools`);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), {
      resource: `${gw.url}/mcp/tools`,
      authorization_servers: [gw.url],
      scopes_supported: ['agents.invoke'],
      bearer_methods_supported: ['header'],
      resource_name: 'MCP server tools',
    });
    const root = await fetch(`${gw.url}/.well-known/oauth-protected-resource`);
    assert.equal(root.status, 404);
  });

  test('MCP_GATEWAY_BASE_URL and OAUTH_ISSUER name the resource and the authorization server', async () => {
    const other = await startMcpTestGateway({
      baseUrl: 'https://gateway.example.com',
      issuer: 'https://auth.example.com',
    });
    try {
      const doc = (await (
        await fetch(`${other.url}/.well-known/oauth-protected-resource/mcp/s1`)
      ).json()) as Record<string, unknown>;
      assert.equal(doc.resource, 'https://gateway.example.com/mcp/s1');
      assert.deepEqual(doc.authorization_servers, ['https://auth.example.com']);
      const res = await fetch(`${other.url}/mcp/s1`, { method: 'POST', body: '{}' });
      assert.match(
        res.headers.get('www-authenticate') ?? '',
        /resource_metadata="https:\/\/gateway\.example\.com\/\.well-known\/oauth-protected-resource\/mcp\/s1"/,
      );
    } finally {
      await other.close();
    }
  });
});

describe('bad bodies and a missing upstream', () => {
  test('a body that is not JSON: 400 with -32700', async () => {
    const res = await rawPost('tools', '{not json');
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as { error: { code: number } }).error.code, -32700);
  });

  test('JSON that is not JSON-RPC, or a batch: 400 with -32600', async () => {
    for (const body of [{ hello: 'world' }, [{ jsonrpc: '2.0', id: 1, method: 'ping' }], 'a string']) {
      const res = await rawPost('tools', body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(((await res.json()) as { error: { code: number } }).error.code, -32600);
    }
  });

  test('a tools/call without a tool name: -32602, the upstream never called', async () => {
    const calls = upstream.requests.length;
    const res = await rawPost('tools', {
      jsonrpc: '2.0',
      id: 4,
      method: 'tools/call',
      params: { arguments: {} },
    });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { id: number; error: { code: number } };
    assert.equal(body.id, 4);
    assert.equal(body.error.code, -32602);
    assert.equal(upstream.requests.length, calls);
  });

  test('a body over the limit: 413 as a JSON-RPC error', async () => {
    const small = await startMcpTestGateway({ maxBody: '1kb' });
    try {
      small.keys.set(KEY, mcpPrincipal());
      const res = await fetch(`${small.url}/mcp/tools`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(4000) } }),
      });
      assert.equal(res.status, 413);
      assert.equal(((await res.json()) as { error: { code: number } }).error.code, -32600);
    } finally {
      await small.close();
    }
  });

  test('the upstream down: -32050 promptly', async () => {
    gw.servers.set('down', {
      id: 'srv-3',
      slug: 'down',
      url: 'http://127.0.0.1:9/mcp',
      enabled: true,
      defaultToolAccess: 'allow',
      defaultKeyAccess: 'allow',
      defaultUserAccess: 'allow',
    });
    const started = performance.now();
    const err = await mcpError(gw.client('down', KEY));
    assert.equal(err.code, McpGatewayError.Unavailable);
    assert.ok(performance.now() - started < 3_000);
  });
});

async function rawPost(slug: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  const all: Record<string, string> = {
    authorization: `Bearer ${KEY}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...headers,
  };
  if (all.authorization === '') delete all.authorization;
  return fetch(`${gw.url}/mcp/${slug}`, {
    method: 'POST',
    headers: all,
    body: typeof body === 'string' && body.startsWith('{') ? body : JSON.stringify(body),
  });
}

function initializeParams() {
  return { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } };
}

async function waitFor(condition: () => boolean, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail('the condition did not hold in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
