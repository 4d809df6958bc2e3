import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { adminService } from '@switchyard/admin';
import { controlPlane } from '@switchyard/control-plane';
import { policyService } from '@switchyard/policy';
import {
  FAKE_AZURE_MODEL,
  listenOnLoopback,
  startFakeAzureOpenAi,
  startServiceHarness,
  type FakeAzureOpenAi,
  type ServiceHarness,
} from '@switchyard/testing';
import { gatewayService } from '../../service.ts';

// Integrations whose provider_auth_type is oauthClientCredentials or wif, through the whole
// gateway: the token endpoint is a loopback fake (127.0.0.1 is a trusted custom host in the
// harness), as is Azure.

const clientSecret = 'entra-client-secret-0123456789';
let h: ServiceHarness;
let azure: FakeAzureOpenAi;
/** An Azure that wants an api-key, so that any bearer token is refused with 401. */
let keyOnlyAzure: FakeAzureOpenAi;
let tokenUrl = '';
let closeTokens: () => Promise<void>;
let dir = '';
let wifFile = '';

/** What the token endpoint was sent, by path; a path in `refusing` answers 401. */
const tokenCalls: Array<{ path: string; form: URLSearchParams }> = [];
const refusing = new Set<string>();
let issued = 0;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'azure-token-auth-'));
  wifFile = join(dir, 'token');
  await writeFile(wifFile, 'projected-sa-token-1');
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      tokenCalls.push({ path, form: new URLSearchParams(Buffer.concat(chunks).toString('utf8')) });
      res.setHeader('content-type', 'application/json');
      if (refusing.has(path)) {
        res.writeHead(401);
        res.end(JSON.stringify({ error: 'invalid_client', error_description: 'AADSTS7000215' }));
        return;
      }
      issued += 1;
      res.end(
        JSON.stringify({ access_token: `entra-token-${issued}`, token_type: 'Bearer', expires_in: 3599 }),
      );
    });
  });
  ({ url: tokenUrl, close: closeTokens } = await listenOnLoopback(server));
  azure = await startFakeAzureOpenAi();
  keyOnlyAzure = await startFakeAzureOpenAi({ apiKey: 'the-only-key' });
  h = await startServiceHarness({
    services: [controlPlane, policyService, adminService, gatewayService],
    env: { WIF_TOKEN_FILE: wifFile },
  });
  await createIntegration('azure-oauth', {
    provider_auth_type: 'oauthClientCredentials',
    oauth_token_endpoint: `${tokenUrl}/oauth/token`,
    oauth_client_id: 'client-1',
    oauth_client_secret: clientSecret,
  });
  await createIntegration('azure-oauth-refused', {
    provider_auth_type: 'oauthClientCredentials',
    oauth_token_endpoint: `${tokenUrl}/refused/token`,
    oauth_client_id: 'client-2',
    oauth_client_secret: clientSecret,
  });
  await createIntegration(
    'azure-oauth-key-only',
    {
      provider_auth_type: 'oauthClientCredentials',
      oauth_token_endpoint: `${tokenUrl}/key-only/token`,
      oauth_client_id: 'client-3',
      oauth_client_secret: clientSecret,
    },
    keyOnlyAzure,
  );
  await createIntegration('azure-wif', {
    provider_auth_type: 'wif',
    wif_token_endpoint: `${tokenUrl}/sts/token`,
    wif_audience: 'api://AzureADTokenExchange',
  });
  await createIntegration('azure-wif-2', {
    provider_auth_type: 'wif',
    wif_token_endpoint: `${tokenUrl}/sts2/token`,
    wif_audience: 'api://AzureADTokenExchange',
  });
});
after(async () => {
  await h.close();
  await Promise.all([azure.close(), keyOnlyAzure.close(), closeTokens()]);
  await rm(dir, { recursive: true, force: true });
});

async function createIntegration(
  slug: string,
  auth: Record<string, string>,
  upstream: FakeAzureOpenAi = azure,
) {
  const res = await h.request('POST', '/admin/v2/integrations', {
    key: h.adminKey,
    json: {
      name: slug,
      slug,
      ai_provider_id: 'azure-openai',
      configurations: { custom_host: upstream.url, deployment: 'gpt4o-prod', ...auth },
    },
  });
  assert.equal(res.status, 200, res.text);
}

function chat(model: string) {
  return h.request('POST', '/v1/chat/completions', {
    key: h.workspaceKey,
    json: { model, messages: [{ role: 'user', content: 'Hello there' }] },
  });
}

const callsTo = (path: string) => tokenCalls.filter((call) => call.path === path);

describe('an azure-openai integration with oauthClientCredentials, through the gateway', () => {
  test('sends a bearer token from the token endpoint in place of api-key, fetched once and reused', async () => {
    const first = await chat('@azure-oauth/gpt-4o');
    assert.equal(first.status, 200, first.text);
    assert.equal(first.body.model, FAKE_AZURE_MODEL);
    assert.equal(first.body.choices[0].message.content, 'Echo: Hello there');
    const upstream = azure.requests.at(-1)!;
    assert.match(upstream.headers.authorization ?? '', /^Bearer entra-token-\d+$/);
    assert.equal(upstream.headers['api-key'], undefined);

    const [call] = callsTo('/oauth/token');
    assert.deepEqual(Object.fromEntries(call!.form), {
      grant_type: 'client_credentials',
      client_id: 'client-1',
      client_secret: clientSecret,
      scope: 'https://cognitiveservices.azure.com/.default',
    });

    const second = await chat('@azure-oauth/gpt-4o');
    assert.equal(second.status, 200, second.text);
    assert.equal(azure.requests.at(-1)!.headers.authorization, upstream.headers.authorization);
    assert.equal(callsTo('/oauth/token').length, 1);
  });

  test('a token endpoint that refuses is a 502 naming it, without the secret; the next request asks again', async () => {
    refusing.add('/refused/token');
    const res = await chat('@azure-oauth-refused/gpt-4o');
    assert.equal(res.status, 502, res.text);
    assert.equal(res.body.error.code, 'provider_token_refused');
    assert.match(res.body.error.message, /token endpoint refused the request \(HTTP 401, invalid_client\)/);
    assert.ok(!res.text.includes(clientSecret));

    refusing.delete('/refused/token');
    const again = await chat('@azure-oauth-refused/gpt-4o');
    assert.equal(again.status, 200, again.text);
    assert.equal(callsTo('/refused/token').length, 2);
  });

  test('a token Azure refuses (401) is dropped: the next request fetches a new one', async () => {
    const res = await chat('@azure-oauth-key-only/gpt-4o');
    assert.equal(res.status, 401, res.text);
    assert.equal(callsTo('/key-only/token').length, 1);
    await chat('@azure-oauth-key-only/gpt-4o');
    assert.equal(callsTo('/key-only/token').length, 2);
  });
});

describe('an azure-openai integration with wif, through the gateway', () => {
  test('exchanges the gateway’s workload identity token and sends the answer as a bearer token', async () => {
    const res = await chat('@azure-wif/gpt-4o');
    assert.equal(res.status, 200, res.text);
    const [call] = callsTo('/sts/token');
    assert.equal(call!.form.get('grant_type'), 'urn:ietf:params:oauth:grant-type:token-exchange');
    assert.equal(call!.form.get('subject_token'), 'projected-sa-token-1');
    assert.equal(call!.form.get('audience'), 'api://AzureADTokenExchange');
    const upstream = azure.requests.at(-1)!;
    assert.match(upstream.headers.authorization ?? '', /^Bearer entra-token-\d+$/);
    assert.equal(upstream.headers['api-key'], undefined);
  });

  test('an unreadable workload identity token is a 503 naming it, without the token', async () => {
    await rm(wifFile);
    try {
      const res = await chat('@azure-wif-2/gpt-4o');
      assert.equal(res.status, 503, res.text);
      assert.equal(res.body.error.code, 'workload_identity_token_unreadable');
      assert.match(res.body.error.message, /workload identity token is not readable/);
      assert.equal(callsTo('/sts2/token').length, 0);
    } finally {
      await writeFile(wifFile, 'projected-sa-token-2');
    }
    const res = await chat('@azure-wif-2/gpt-4o');
    assert.equal(res.status, 200, res.text);
    assert.equal(callsTo('/sts2/token')[0]!.form.get('subject_token'), 'projected-sa-token-2');
  });
});
