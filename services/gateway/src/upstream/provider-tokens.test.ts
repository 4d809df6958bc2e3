import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import { AppError } from '@switchyard/core';
import type { Resolver } from '@switchyard/rules';
import { listenOnLoopback } from '@switchyard/testing';
import type { ProviderTarget } from '../providers/types.ts';
import { createUpstreamDispatcher } from './http-client.ts';
import {
  DEFAULT_AZURE_AUTHORITY_HOST,
  DEFAULT_TOKEN_SCOPE,
  MAX_TOKEN_ANSWER_BYTES,
  ProviderTokens,
  type ProviderTokenOptions,
} from './provider-tokens.ts';
import { publicAddressLookup } from '@switchyard/rules';

// Only the loopback token endpoint below is ever connected to: other hosts are refused by the
// URL or by the injected resolver, in the connection's own lookup.

/** What the token endpoint answers next, by path; each call is recorded with its form. */
type Answer = { status: number; body: string } | 'hang';
const answers = new Map<string, Answer>();
const calls: Array<{ path: string; form: URLSearchParams; authorization: string | undefined }> = [];
let issued = 0;
let base = '';
let closeServer: () => Promise<void>;
let dir = '';

const resolved: string[] = [];
const resolve: Resolver = async (host) => {
  resolved.push(host);
  return host === 'sts.internal.example' ? ['10.1.2.3'] : [];
};
const dispatcher = createUpstreamDispatcher({});
const customHostDispatcher = createUpstreamDispatcher({}, publicAddressLookup(resolve));

let clock = 1_000_000;
const tokens = (options: Partial<ProviderTokenOptions> = {}) =>
  new ProviderTokens({
    dispatcher,
    customHostDispatcher,
    trustedHosts: ['127.0.0.1'],
    wifTokenFile: join(dir, 'token'),
    now: () => clock,
    fetchTimeoutMs: 300,
    ...options,
  });

/** A fresh token each call, valid for an hour unless the path's answer says otherwise. */
function handle(req: IncomingMessage, res: ServerResponse, body: string): void {
  const path = req.url ?? '/';
  calls.push({ path, form: new URLSearchParams(body), authorization: req.headers.authorization });
  const answer = answers.get(path);
  if (answer === 'hang') return;
  issued += 1;
  res.writeHead(answer?.status ?? 200, { 'content-type': 'application/json' });
  res.end(
    answer?.body ??
      JSON.stringify({ access_token: `token-${issued}`, token_type: 'Bearer', expires_in: 3600 }),
  );
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'provider-tokens-'));
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  ({ url: base, close: closeServer } = await listenOnLoopback(server));
});
after(async () => {
  await closeServer();
  await Promise.all([dispatcher.close(), customHostDispatcher.close()]);
  await rm(dir, { recursive: true, force: true });
});
beforeEach(() => {
  answers.clear();
  calls.length = 0;
  resolved.length = 0;
});

const clientSecret = 'client-secret-value-0123456789';

function oauthTarget(settings: Record<string, string> = {}, id = 'integration-1'): ProviderTarget {
  return {
    provider: 'azure-openai',
    apiKey: '',
    headers: {},
    integrationId: id,
    integrationSlug: 'azure-oauth',
    settings: {
      provider_auth_type: 'oauthClientCredentials',
      oauth_token_endpoint: `${base}/oauth2/token`,
      oauth_client_id: 'client-1',
      oauth_client_secret: clientSecret,
      ...settings,
    },
  };
}

function wifTarget(settings: Record<string, string> = {}, id = 'integration-wif'): ProviderTarget {
  return {
    provider: 'azure-openai',
    apiKey: '',
    headers: {},
    integrationId: id,
    integrationSlug: 'azure-wif',
    settings: {
      provider_auth_type: 'wif',
      wif_token_endpoint: `${base}/sts/token`,
      wif_audience: 'api://AzureADTokenExchange',
      ...settings,
    },
  };
}

function entraTarget(settings: Record<string, string> = {}, id = 'integration-entra'): ProviderTarget {
  return {
    provider: 'azure-openai',
    apiKey: '',
    headers: {},
    integrationId: id,
    integrationSlug: 'azure-entra',
    settings: {
      azure_auth_mode: 'entra',
      azure_entra_tenant_id: 'contoso.onmicrosoft.com',
      azure_entra_client_id: 'entra-client-1',
      azure_entra_client_secret: clientSecret,
      azure_authority_host: `${base}/`,
      ...settings,
    },
  };
}

/** The error a failed fetch gives: the one error shape, never a bare Error. */
async function refusal(promise: Promise<unknown>): Promise<AppError> {
  const err = await promise.then(
    () => assert.fail('expected the token fetch to fail'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof AppError, `not an AppError: ${String(err)}`);
  return err;
}

describe('oauthClientCredentials tokens', () => {
  test('the first request fetches with client_secret_post; later ones reuse the token', async () => {
    const source = tokens();
    assert.equal(await source.token(oauthTarget()), 'token-' + issued);
    const first = issued;
    assert.equal(await source.token(oauthTarget()), `token-${first}`);
    assert.equal(await source.token(oauthTarget()), `token-${first}`);
    assert.equal(calls.length, 1);
    const [call] = calls;
    assert.equal(call!.path, '/oauth2/token');
    assert.equal(call!.authorization, undefined);
    assert.deepEqual(Object.fromEntries(call!.form), {
      grant_type: 'client_credentials',
      client_id: 'client-1',
      client_secret: clientSecret,
      scope: DEFAULT_TOKEN_SCOPE,
    });
  });

  test('the integration’s own scope is sent', async () => {
    await tokens().token(oauthTarget({ oauth_scope: 'api://custom/.default offline_access' }));
    assert.equal(calls[0]!.form.get('scope'), 'api://custom/.default offline_access');
  });

  test('a token is refreshed before use once less than five minutes of its hour is left', async () => {
    const source = tokens();
    const first = await source.token(oauthTarget());
    clock += 3_600_000 - 300_000 - 1;
    assert.equal(await source.token(oauthTarget()), first);
    clock += 1;
    const second = await source.token(oauthTarget());
    assert.notEqual(second, first);
    assert.equal(calls.length, 2);
  });

  test('a short-lived token is refreshed when a tenth of its life is left', async () => {
    answers.set('/oauth2/token', {
      status: 200,
      body: JSON.stringify({ access_token: 'short-lived', token_type: 'bearer', expires_in: '600' }),
    });
    const source = tokens();
    assert.equal(await source.token(oauthTarget()), 'short-lived');
    clock += 540_000 - 1;
    await source.token(oauthTarget());
    assert.equal(calls.length, 1);
    clock += 1;
    await source.token(oauthTarget());
    assert.equal(calls.length, 2);
  });

  test('a refresh that fails keeps the token held until it expires, then the failure is the answer', async () => {
    const source = tokens();
    const first = await source.token(oauthTarget());
    answers.set('/oauth2/token', { status: 503, body: '{"error":"temporarily_unavailable"}' });
    clock += 3_600_000 - 300_000;
    assert.equal(await source.token(oauthTarget()), first, 'the refresh failed: the valid token is sent');
    clock += 300_000 - 1;
    assert.equal(await source.token(oauthTarget()), first);
    clock += 1;
    await assert.rejects(
      source.token(oauthTarget()),
      (err: AppError) => err.code === 'provider_token_refused',
    );
    answers.delete('/oauth2/token');
    assert.notEqual(await source.token(oauthTarget()), first);
  });

  test('concurrent requests share one fetch', async () => {
    const source = tokens();
    const got = await Promise.all(Array.from({ length: 8 }, () => source.token(oauthTarget())));
    assert.equal(new Set(got).size, 1);
    assert.equal(calls.length, 1);
  });

  test('a changed secret fetches anew, with the new secret', async () => {
    const source = tokens();
    const first = await source.token(oauthTarget());
    const second = await source.token(oauthTarget({ oauth_client_secret: 'rotated-secret-value' }));
    assert.notEqual(second, first);
    assert.equal(calls.length, 2);
    assert.equal(calls[1]!.form.get('client_secret'), 'rotated-secret-value');
    // The new token is the integration's now.
    assert.equal(await source.token(oauthTarget({ oauth_client_secret: 'rotated-secret-value' })), second);
    assert.equal(calls.length, 2);
  });

  test('each integration has its own token', async () => {
    const source = tokens();
    const a = await source.token(oauthTarget({}, 'integration-a'));
    const b = await source.token(oauthTarget({}, 'integration-b'));
    assert.notEqual(a, b);
    assert.equal(calls.length, 2);
  });

  test('a token the provider refused is dropped: the next request fetches anew', async () => {
    const source = tokens();
    const first = await source.token(oauthTarget());
    source.forget(oauthTarget());
    assert.notEqual(await source.token(oauthTarget()), first);
    assert.equal(calls.length, 2);
  });

  for (const [what, status, code] of [
    ['401 with an OAuth error', 401, 'invalid_client'],
    ['500', 500, ''],
  ] as const) {
    test(`a token endpoint answering ${what} is a 502 naming it, and the next request tries again`, async () => {
      answers.set('/oauth2/token', {
        status,
        body: JSON.stringify({ error: code || undefined, error_description: `bad ${clientSecret}` }),
      });
      const source = tokens();
      const err = await refusal(source.token(oauthTarget()));
      assert.equal(err.status, 502);
      assert.equal(err.code, 'provider_token_refused');
      assert.match(err.message, new RegExp(`token endpoint refused the request \\(HTTP ${status}`));
      if (code) assert.match(err.message, new RegExp(code));
      assert.ok(!err.message.includes(clientSecret));
      answers.delete('/oauth2/token');
      assert.match(await source.token(oauthTarget()), /^token-/);
      assert.equal(calls.length, 2);
    });
  }

  for (const [what, body, message] of [
    ['a body that is not JSON', '<html>oops</html>', /no access_token/],
    ['JSON without access_token', '{"token_type":"Bearer","expires_in":3600}', /no access_token/],
    ['a token that is not a string', '{"access_token":42}', /no access_token/],
    ['another token type', '{"access_token":"t","token_type":"mac","expires_in":3600}', /token_type/],
    ['a negative expires_in', '{"access_token":"t","token_type":"Bearer","expires_in":-5}', /expires_in/],
    ['an answer that is too large', 'x'.repeat(MAX_TOKEN_ANSWER_BYTES + 1), /more than/],
  ] as const) {
    test(`a token endpoint answering ${what} is a 502`, async () => {
      answers.set('/oauth2/token', { status: 200, body });
      const err = await refusal(tokens().token(oauthTarget()));
      assert.equal(err.status, 502);
      assert.equal(err.code, 'provider_token_invalid');
      assert.match(err.message, message);
    });
  }

  test('a token endpoint that does not answer in time is a 504, and nothing is kept', async () => {
    answers.set('/oauth2/token', 'hang');
    const source = tokens();
    const err = await refusal(source.token(oauthTarget()));
    assert.equal(err.status, 504);
    assert.equal(err.code, 'provider_token_timeout');
    answers.delete('/oauth2/token');
    assert.match(await source.token(oauthTarget()), /^token-/);
  });

  test('a token endpoint on a private address is refused before connecting, naming the setting', async () => {
    const err = await refusal(
      tokens().token(oauthTarget({ oauth_token_endpoint: 'https://sts.internal.example/token' })),
    );
    assert.equal(err.status, 400);
    assert.equal(err.code, 'unsafe_custom_host');
    assert.equal(err.param, 'oauth_token_endpoint');
    assert.deepEqual(resolved, ['sts.internal.example']);
    assert.equal(calls.length, 0);
  });

  test('a token endpoint the URL rules refuse (a metadata host) is refused without a lookup', async () => {
    const err = await refusal(
      tokens().token(oauthTarget({ oauth_token_endpoint: 'http://169.254.169.254/token' })),
    );
    assert.equal(err.status, 400);
    assert.equal(err.param, 'oauth_token_endpoint');
    assert.deepEqual(resolved, []);
  });
});

describe('wif tokens', () => {
  test('the gateway’s own token is exchanged (RFC 8693), and a rotated file is sent at the next exchange', async () => {
    const file = join(dir, 'token');
    await writeFile(file, 'projected-sa-token-1\n');
    const source = tokens();
    const first = await source.token(wifTarget());
    assert.deepEqual(Object.fromEntries(calls[0]!.form), {
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      subject_token: 'projected-sa-token-1',
      subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
      requested_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      audience: 'api://AzureADTokenExchange',
      scope: DEFAULT_TOKEN_SCOPE,
    });
    assert.equal(calls[0]!.path, '/sts/token');
    assert.equal(await source.token(wifTarget()), first);

    await writeFile(file, 'projected-sa-token-2');
    clock += 3_600_000;
    assert.notEqual(await source.token(wifTarget()), first);
    assert.equal(calls.length, 2);
    assert.equal(calls[1]!.form.get('subject_token'), 'projected-sa-token-2');
  });

  test('the integration’s wif_scope is sent', async () => {
    await writeFile(join(dir, 'token'), 'projected-sa-token');
    await tokens().token(wifTarget({ wif_scope: 'api://other/.default' }));
    assert.equal(calls[0]!.form.get('scope'), 'api://other/.default');
  });

  test('a missing token file is a 503 naming the workload identity token, and nothing is sent', async () => {
    const err = await refusal(tokens({ wifTokenFile: join(dir, 'missing') }).token(wifTarget()));
    assert.equal(err.status, 503);
    assert.equal(err.code, 'workload_identity_token_unreadable');
    assert.match(err.message, /workload identity token is not readable/);
    assert.equal(calls.length, 0);
  });

  test('an empty token file is refused the same way', async () => {
    await writeFile(join(dir, 'empty'), '\n');
    const err = await refusal(tokens({ wifTokenFile: join(dir, 'empty') }).token(wifTarget()));
    assert.equal(err.code, 'workload_identity_token_unreadable');
  });

  test('an STS refusal is a 502 that does not repeat the subject token', async () => {
    await writeFile(join(dir, 'token'), 'projected-sa-token-secret');
    answers.set('/sts/token', {
      status: 400,
      body: JSON.stringify({ error: 'invalid_grant', error_description: 'projected-sa-token-secret' }),
    });
    const err = await refusal(tokens().token(wifTarget()));
    assert.equal(err.status, 502);
    assert.match(err.message, /HTTP 400, invalid_grant/);
    assert.ok(!err.message.includes('projected-sa-token-secret'));
  });
});

describe('azure_auth_mode entra tokens', () => {
  test('fetched with client_secret_post at the tenant’s v2.0 token endpoint, for Azure’s scope', async () => {
    const source = tokens();
    const first = await source.token(entraTarget());
    assert.equal(await source.token(entraTarget()), first);
    assert.equal(calls.length, 1);
    const [call] = calls;
    assert.equal(call!.path, '/contoso.onmicrosoft.com/oauth2/v2.0/token');
    assert.equal(call!.authorization, undefined);
    assert.deepEqual(Object.fromEntries(call!.form), {
      grant_type: 'client_credentials',
      client_id: 'entra-client-1',
      client_secret: clientSecret,
      scope: DEFAULT_TOKEN_SCOPE,
    });
  });

  test('a changed client secret fetches anew, with the new secret', async () => {
    const source = tokens();
    const first = await source.token(entraTarget());
    const second = await source.token(entraTarget({ azure_entra_client_secret: 'rotated-entra-secret' }));
    assert.notEqual(second, first);
    assert.equal(calls.length, 2);
    assert.equal(calls[1]!.form.get('client_secret'), 'rotated-entra-secret');
  });

  test('a changed tenant fetches anew, at the new tenant', async () => {
    const source = tokens();
    await source.token(entraTarget());
    await source.token(entraTarget({ azure_entra_tenant_id: '72f988bf-86f1-41af-91ab-2d7cd011db47' }));
    assert.deepEqual(
      calls.map((call) => call.path),
      [
        '/contoso.onmicrosoft.com/oauth2/v2.0/token',
        '/72f988bf-86f1-41af-91ab-2d7cd011db47/oauth2/v2.0/token',
      ],
    );
  });

  test('a refresh that fails keeps the token held until it expires', async () => {
    const source = tokens();
    const first = await source.token(entraTarget());
    answers.set('/contoso.onmicrosoft.com/oauth2/v2.0/token', {
      status: 401,
      body: '{"error":"invalid_client"}',
    });
    clock += 3_600_000 - 300_000;
    assert.equal(await source.token(entraTarget()), first);
    clock += 300_000;
    const err = await refusal(source.token(entraTarget()));
    assert.equal(err.code, 'provider_token_refused');
    assert.match(err.message, /HTTP 401, invalid_client/);
    assert.ok(!err.message.includes(clientSecret));
  });

  test('without an authority host, Entra’s public one is asked', async () => {
    const { azure_authority_host: _default, ...settings } = entraTarget().settings;
    // The injected resolver knows no public name: the lookup fails, and nothing leaves the machine.
    const err = await refusal(tokens().token({ ...entraTarget(), settings }));
    assert.equal(err.status, 502);
    assert.equal(err.code, 'provider_token_unreachable');
    assert.deepEqual(resolved, [new URL(DEFAULT_AZURE_AUTHORITY_HOST).hostname]);
    assert.equal(calls.length, 0);
  });

  test('an authority host on a private address is refused before connecting, naming the setting', async () => {
    const err = await refusal(
      tokens().token(entraTarget({ azure_authority_host: 'https://sts.internal.example' })),
    );
    assert.equal(err.status, 400);
    assert.equal(err.code, 'unsafe_custom_host');
    assert.equal(err.param, 'azure_authority_host');
    assert.deepEqual(resolved, ['sts.internal.example']);
    assert.equal(calls.length, 0);
  });
});
