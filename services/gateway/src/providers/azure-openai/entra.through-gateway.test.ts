import assert from 'node:assert/strict';
import { createServer } from 'node:http';
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

// Integrations whose azure_auth_mode is entra, through the whole gateway: the Entra authority
// is a loopback fake (azure_authority_host; 127.0.0.1 is a trusted custom host in the
// harness), as is Azure.

const clientSecret = 'entra-app-secret-0123456789';
const tenant = 'contoso.onmicrosoft.com';
let h: ServiceHarness;
let azure: FakeAzureOpenAi;
let authority = '';
let closeAuthority: () => Promise<void>;

/** What the authority was sent, by path; a client id in `refusing` is answered 401. */
const tokenCalls: Array<{ path: string; form: URLSearchParams }> = [];
const refusing = new Set<string>();
let issued = 0;

before(async () => {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      tokenCalls.push({ path: req.url ?? '/', form });
      res.setHeader('content-type', 'application/json');
      if (refusing.has(form.get('client_id') ?? '')) {
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
  ({ url: authority, close: closeAuthority } = await listenOnLoopback(server));
  azure = await startFakeAzureOpenAi();
  h = await startServiceHarness({ services: [controlPlane, policyService, adminService, gatewayService] });
  await createIntegration('azure-entra', 'entra-client-1');
  await createIntegration('azure-entra-refused', 'entra-client-2');
});
after(async () => {
  await h.close();
  await Promise.all([azure.close(), closeAuthority()]);
});

async function createIntegration(slug: string, clientId: string) {
  const res = await h.request('POST', '/admin/v2/integrations', {
    key: h.adminKey,
    json: {
      name: slug,
      slug,
      ai_provider_id: 'azure-openai',
      configurations: {
        custom_host: azure.url,
        deployment: 'gpt4o-prod',
        azure_auth_mode: 'entra',
        azure_entra_tenant_id: tenant,
        azure_entra_client_id: clientId,
        azure_entra_client_secret: clientSecret,
        azure_authority_host: authority,
      },
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

const callsOf = (clientId: string) => tokenCalls.filter((call) => call.form.get('client_id') === clientId);

describe('an azure-openai integration with azure_auth_mode entra, through the gateway', () => {
  test('sends a bearer token from the tenant’s Entra token endpoint and no api-key, fetched once and reused', async () => {
    const first = await chat('@azure-entra/gpt-4o');
    assert.equal(first.status, 200, first.text);
    assert.equal(first.body.model, FAKE_AZURE_MODEL);
    assert.equal(first.body.choices[0].message.content, 'Echo: Hello there');
    const upstream = azure.requests.at(-1)!;
    assert.match(upstream.headers.authorization ?? '', /^Bearer entra-token-\d+$/);
    assert.equal(upstream.headers['api-key'], undefined);

    const [call] = callsOf('entra-client-1');
    assert.equal(call!.path, `/${tenant}/oauth2/v2.0/token`);
    assert.deepEqual(Object.fromEntries(call!.form), {
      grant_type: 'client_credentials',
      client_id: 'entra-client-1',
      client_secret: clientSecret,
      scope: 'https://cognitiveservices.azure.com/.default',
    });

    const second = await chat('@azure-entra/gpt-4o');
    assert.equal(second.status, 200, second.text);
    assert.equal(azure.requests.at(-1)!.headers.authorization, upstream.headers.authorization);
    assert.equal(callsOf('entra-client-1').length, 1);
  });

  test('an Entra refusal is a 502 naming it, without the secret; the next request asks again', async () => {
    refusing.add('entra-client-2');
    const res = await chat('@azure-entra-refused/gpt-4o');
    assert.equal(res.status, 502, res.text);
    assert.equal(res.body.error.code, 'provider_token_refused');
    assert.match(res.body.error.message, /token endpoint refused the request \(HTTP 401, invalid_client\)/);
    assert.ok(!res.text.includes(clientSecret));

    refusing.delete('entra-client-2');
    const again = await chat('@azure-entra-refused/gpt-4o');
    assert.equal(again.status, 200, again.text);
    assert.equal(callsOf('entra-client-2').length, 2);
  });
});
