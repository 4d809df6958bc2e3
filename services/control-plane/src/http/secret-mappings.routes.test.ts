import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createLogger, Forbidden, NotFound, ServiceUnavailable } from '@switchyard/core';
import { admin } from '@switchyard/proto';
import { GrpcServer } from '@switchyard/runtime';
import {
  startFakeMcpServer,
  startServiceHarness,
  type FakeMcp,
  type ServiceHarness,
} from '@switchyard/testing';
import { controlPlane } from '../service.ts';
import { createWorkspace } from '../testing/workspaces.ts';

/*
 * Secret mappings of guardrail webhooks and MCP integrations, against a stand-in of admin's
 * SecretReferenceService: checked at save, resolved when gateways read the resource and when
 * control-plane itself calls the upstream; values never in an answer.
 */

interface Reference {
  id: string;
  slug: string;
  organisationId: string;
  /** Null: open to every workspace. */
  workspaceId: string | null;
  value: string;
}

/** The stand-in's references and what it was asked. */
const secrets = {
  references: [] as Reference[],
  asked: [] as admin.ResolveSecretMappingsRequest[],
  /** Answer every resolve UNAVAILABLE, as admin does when the store cannot be reached. */
  storeDown: false,
};

function addReference(organisationId: string, value: string, workspaceId: string | null = null): Reference {
  const reference = {
    id: randomUUID(),
    slug: `ref-${randomUUID().slice(0, 8)}`,
    organisationId,
    workspaceId,
    value,
  };
  secrets.references.push(reference);
  return reference;
}

let standIn: GrpcServer;
let h: ServiceHarness;
let mcpUpstream: FakeMcp;
const MCP_TOKEN = 'mapped-mcp-token-5678';

before(async () => {
  const logger = createLogger('secret-references-stand-in', 'error');
  logger.silent = true;
  standIn = new GrpcServer({ logger, security: {} }).add(
    admin.SecretReferenceService,
    {
      resolveSecretMappings: async (request) => {
        secrets.asked.push(request);
        const found = request.mappings.map((mapping, i) => {
          const reference = secrets.references.find(
            (r) =>
              r.organisationId === request.organisationId &&
              (r.id === mapping.secretReferenceId || r.slug === mapping.secretReferenceId),
          );
          if (!reference) {
            throw new NotFound(`mappings[${i}]: secret reference '${mapping.secretReferenceId}' not found.`, {
              param: `mappings[${i}].secret_reference_id`,
              code: 'secret_reference_not_found',
            });
          }
          if (reference.workspaceId !== null && reference.workspaceId !== request.workspaceId) {
            throw new Forbidden(
              `mappings[${i}]: secret reference '${reference.slug}' is not open to the workspace.`,
              {
                param: `mappings[${i}].secret_reference_id`,
              },
            );
          }
          return { mapping: { ...mapping, secretReferenceId: reference.id }, reference };
        });
        if (request.checkOnly) return { mappings: found.map((f) => f.mapping), values: {} };
        if (secrets.storeDown) throw new ServiceUnavailable('the secret store cannot be reached');
        return {
          mappings: found.map((f) => f.mapping),
          values: Object.fromEntries(found.map((f) => [f.mapping.targetField, f.reference.value])),
        };
      },
    },
    { resolveSecretMappings: ['control-plane'] },
  );
  const port = await standIn.listen('127.0.0.1', 0);
  mcpUpstream = await startFakeMcpServer({ requireBearer: MCP_TOKEN });
  h = await startServiceHarness({
    services: [controlPlane],
    clientAddresses: { secretReferences: `127.0.0.1:${port}` },
    env: { TRUSTED_CUSTOM_HOSTS: '127.0.0.1', MCP_SYNC_INTERVAL_SECONDS: '0', MCP_SYNC_TIMEOUT_MS: '5000' },
    resolve: async () => ['93.184.216.34'],
  });
});
after(async () => {
  await h?.close();
  await standIn?.close();
  await mcpUpstream?.close();
});

const hook = (headers: Record<string, string> = {}) => ({
  id: 'default.webhook',
  parameters: { webhookURL: 'https://guard.example.com/verdict', headers },
});

/** The webhook check's headers as the gateways read the guardrail. */
async function directoryCheck(guardrailId: string): Promise<Record<string, unknown>> {
  const listed = await h.client('guardrailDirectory').listGuardrails({ organisationId: h.organisationId });
  const found = listed.guardrails.find((g) => g.id === guardrailId);
  assert.ok(found, 'the directory lists the guardrail');
  return (JSON.parse(found.checksJson) as Array<Record<string, unknown>>)[0]!;
}

describe('guardrail webhook secret mappings', () => {
  test('are checked with admin at save, shown by reference id, and resolved into the headers gateways read', async () => {
    const reference = addReference(h.organisationId, 'Bearer from-the-vault-1');
    secrets.asked.length = 0;
    const created = await h.request('POST', '/v1/guardrails', {
      key: h.adminKey,
      json: {
        name: 'Mapped hook',
        checks: [hook({ authorization: 'Bearer inline-loses', 'X-Team': 'search' })],
        actions: { deny: true },
        secret_mappings: [{ target_field: 'headers.Authorization', secret_reference_id: reference.slug }],
      },
    });
    assert.equal(created.status, 200, created.text);
    assert.equal(secrets.asked.length, 1);
    assert.equal(secrets.asked[0]!.checkOnly, true);
    assert.equal(secrets.asked[0]!.organisationId, h.organisationId);
    assert.equal(secrets.asked[0]!.workspaceId, '', 'an organisation-level guardrail');

    const read = await h.request('GET', `/v1/guardrails/${created.body.id}`, { key: h.adminKey });
    assert.equal(read.status, 200, read.text);
    assert.deepEqual(read.body.secret_mappings, [
      {
        target_field: 'headers.Authorization',
        secret_reference_id: reference.id,
        secret_key: null,
        value_format: null,
        json_pointer: null,
      },
    ]);
    const check = await directoryCheck(created.body.id);
    assert.deepEqual((check.parameters as { headers: unknown }).headers, {
      'X-Team': 'search',
      Authorization: 'Bearer from-the-vault-1',
    });
    assert.equal(check.unavailable, undefined);
    const answers = [
      read.text,
      (await h.request('GET', '/v1/guardrails', { key: h.adminKey })).text,
      (await h.request('GET', `/v1/guardrails/${created.body.id}/versions`, { key: h.adminKey })).text,
    ];
    for (const text of answers) assert.ok(!text.includes('from-the-vault'), text);

    reference.value = 'Bearer rotated-2';
    const rotated = await directoryCheck(created.body.id);
    assert.equal(
      (rotated.parameters as { headers: Record<string, string> }).headers.Authorization,
      'Bearer rotated-2',
    );
  });

  test('a workspace guardrail is checked for its workspace; a reference not open to it is a 403 naming the mapping', async () => {
    const workspace = await createWorkspace(h, 'Mapped guard workspace');
    const elsewhere = addReference(h.organisationId, 'nope', randomUUID());
    const refused = await h.request('POST', '/v1/guardrails', {
      key: h.adminKey,
      json: {
        name: 'Workspace hook',
        workspace_id: workspace.id,
        checks: [hook()],
        actions: {},
        secret_mappings: [{ target_field: 'headers.X-Key', secret_reference_id: elsewhere.id }],
      },
    });
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.body.error.param, 'secret_mappings[0].secret_reference_id');
    assert.equal(secrets.asked.at(-1)!.workspaceId, workspace.id);
  });

  test('bad mappings are refused and nothing is stored', async () => {
    const before = (await h.request('GET', '/v1/guardrails?page_size=1000', { key: h.adminKey })).body.total;
    const reference = addReference(h.organisationId, 'v');
    const attempt = (secret_mappings: unknown, checks: unknown[] = [hook()]) =>
      h.request('POST', '/v1/guardrails', {
        key: h.adminKey,
        json: { name: 'Bad mapped hook', checks, actions: {}, secret_mappings },
      });
    const unknown = await attempt([
      { target_field: 'headers.X-Key', secret_reference_id: 'no-such-reference' },
    ]);
    assert.equal(unknown.status, 404, unknown.text);
    assert.equal(unknown.body.error.param, 'secret_mappings[0].secret_reference_id');
    assert.equal(unknown.body.error.code, 'secret_reference_not_found');
    assert.match(unknown.body.error.message, /no-such-reference/);

    const cases: Array<[unknown, string, unknown[]?]> = [
      [[{ target_field: 'body.key', secret_reference_id: reference.id }], 'secret_mappings[0].target_field'],
      [
        [{ target_field: 'headers.Host', secret_reference_id: reference.id }],
        'secret_mappings[0].target_field',
      ],
      [
        [{ target_field: 'headers.Bad Name', secret_reference_id: reference.id }],
        'secret_mappings[0].target_field',
      ],
      [
        [{ target_field: 'headers.X-Key', secret_reference_id: reference.id, json_pointer: '/a' }],
        'secret_mappings[0].json_pointer',
      ],
      [
        [
          { target_field: 'headers.X-Key', secret_reference_id: reference.id },
          { target_field: 'headers.x-key', secret_reference_id: reference.id },
        ],
        'secret_mappings[1].target_field',
      ],
      [
        Array.from({ length: 17 }, (_, i) => ({
          target_field: `headers.X-K${i}`,
          secret_reference_id: reference.id,
        })),
        'secret_mappings',
      ],
      [
        [{ target_field: 'headers.X-Key', secret_reference_id: reference.id }],
        'secret_mappings',
        [{ id: 'default.regexMatch', parameters: { rule: 'x' } }],
      ],
    ];
    for (const [mappings, param, checks] of cases) {
      const res = await attempt(mappings, checks);
      assert.equal(res.status, 400, `${JSON.stringify(mappings)}: ${res.text}`);
      assert.equal(res.body.error.param, param, res.text);
    }
    const after_ = (await h.request('GET', '/v1/guardrails?page_size=1000', { key: h.adminKey })).body.total;
    assert.equal(after_, before);
  });

  test('updates replace, keep or clear the mappings; a webhook check they need cannot be taken away', async () => {
    const first = addReference(h.organisationId, 'first-value');
    const second = addReference(h.organisationId, 'second-value');
    const created = await h.request('POST', '/v1/guardrails', {
      key: h.adminKey,
      json: {
        name: 'Updated hook',
        checks: [hook()],
        actions: {},
        secret_mappings: [{ target_field: 'headers.X-Key', secret_reference_id: first.id }],
      },
    });
    assert.equal(created.status, 200, created.text);
    const id = created.body.id as string;
    const headers = async () =>
      ((await directoryCheck(id)).parameters as { headers: Record<string, string> }).headers;

    const renamed = await h.request('PUT', `/v1/guardrails/${id}`, {
      key: h.adminKey,
      json: { name: 'Renamed' },
    });
    assert.equal(renamed.status, 200, renamed.text);
    assert.deepEqual(await headers(), { 'X-Key': 'first-value' });

    const replaced = await h.request('PUT', `/v1/guardrails/${id}`, {
      key: h.adminKey,
      json: { secret_mappings: [{ target_field: 'headers.X-Other', secret_reference_id: second.slug }] },
    });
    assert.equal(replaced.status, 200, replaced.text);
    assert.deepEqual(await headers(), { 'X-Other': 'second-value' });

    const withoutWebhook = await h.request('PUT', `/v1/guardrails/${id}`, {
      key: h.adminKey,
      json: { checks: [{ id: 'default.regexMatch', parameters: { rule: 'x' } }] },
    });
    assert.equal(withoutWebhook.status, 400, withoutWebhook.text);
    assert.equal(withoutWebhook.body.error.param, 'checks');
    assert.deepEqual(await headers(), { 'X-Other': 'second-value' }, 'nothing changed');

    const cleared = await h.request('PUT', `/v1/guardrails/${id}`, {
      key: h.adminKey,
      json: { secret_mappings: [] },
    });
    assert.equal(cleared.status, 200, cleared.text);
    assert.deepEqual(
      (await h.request('GET', `/v1/guardrails/${id}`, { key: h.adminKey })).body.secret_mappings,
      [],
    );
    assert.deepEqual(await headers(), {});
  });

  test('when the values cannot be had, the webhook checks are marked unavailable, never sent without them', async () => {
    const reference = addReference(h.organisationId, 'Bearer kept-out');
    const created = await h.request('POST', '/v1/guardrails', {
      key: h.adminKey,
      json: {
        name: 'Store down hook',
        checks: [hook(), { id: 'default.regexMatch', parameters: { rule: 'x' } }],
        actions: { deny: true },
        secret_mappings: [{ target_field: 'headers.Authorization', secret_reference_id: reference.id }],
      },
    });
    assert.equal(created.status, 200, created.text);
    secrets.storeDown = true;
    try {
      const listed = await h
        .client('guardrailDirectory')
        .listGuardrails({ organisationId: h.organisationId });
      const found = listed.guardrails.find((g) => g.id === created.body.id)!;
      const [webhook, regex] = JSON.parse(found.checksJson) as Array<Record<string, unknown>>;
      assert.match(String(webhook!.unavailable), /secret mappings cannot be resolved/);
      assert.equal(regex!.unavailable, undefined, 'other checks run as ever');
      assert.deepEqual((webhook!.parameters as { headers: unknown }).headers, {});
    } finally {
      secrets.storeDown = false;
    }
    const recovered = await directoryCheck(created.body.id);
    assert.equal(recovered.unavailable, undefined);
  });

  test('a value that is no valid header value is never handed out', async () => {
    const reference = addReference(h.organisationId, 'line one\r\nInjected: yes');
    const created = await h.request('POST', '/v1/guardrails', {
      key: h.adminKey,
      json: {
        name: 'CRLF hook',
        checks: [hook()],
        actions: {},
        secret_mappings: [{ target_field: 'headers.X-Key', secret_reference_id: reference.id }],
      },
    });
    assert.equal(created.status, 200, created.text);
    const check = await directoryCheck(created.body.id);
    assert.match(String(check.unavailable), /not a valid header value/);
    assert.ok(!JSON.stringify(check).includes('Injected'));
  });
});

describe('MCP integration secret mappings', () => {
  test('a mapped header is checked at save, used by the sync and /test, and handed to gateways; never shown', async () => {
    const reference = addReference(h.organisationId, `Bearer ${MCP_TOKEN}`);
    secrets.asked.length = 0;
    const created = await h.request('POST', '/v2/mcp-integrations', {
      key: h.adminKey,
      json: {
        name: 'Mapped MCP',
        url: mcpUpstream.endpoint,
        auth_type: 'headers',
        transport: 'http',
        workspace_id: h.workspaceId,
        secret_mappings: [
          { target_field: 'custom_headers.Authorization', secret_reference_id: reference.slug },
        ],
      },
    });
    assert.equal(created.status, 200, created.text);
    assert.equal(secrets.asked[0]!.checkOnly, true);
    assert.equal(secrets.asked[0]!.workspaceId, h.workspaceId);

    const synced = await h.request('POST', `/v2/mcp-integrations/${created.body.id}/sync`, {
      key: h.adminKey,
    });
    assert.equal(synced.status, 200, synced.text);
    const metadata = await h.request('GET', `/v2/mcp-integrations/${created.body.id}/metadata`, {
      key: h.adminKey,
    });
    assert.equal(metadata.body.sync_status, 'synced', metadata.text);
    assert.ok(mcpUpstream.requests.some((r) => r.headers.authorization === `Bearer ${MCP_TOKEN}`));

    const read = await h.request('GET', `/v2/mcp-integrations/${created.body.id}`, { key: h.adminKey });
    assert.equal(read.status, 200, read.text);
    assert.equal(read.body.secret_mappings[0].secret_reference_id, reference.id);
    assert.ok(!read.text.includes(MCP_TOKEN));

    const server = await h.request('POST', '/v2/mcp-servers', {
      key: h.adminKey,
      json: { name: 'Mapped server', mcp_integration_id: created.body.id, workspace_id: h.workspaceId },
    });
    assert.equal(server.status, 200, server.text);
    const tested = await h.request('POST', `/v2/mcp-servers/${server.body.id}/test`, { key: h.adminKey });
    assert.equal(tested.body.success, true, tested.text);
    const shown = await h.request('GET', `/v2/mcp-servers/${server.body.id}`, { key: h.adminKey });
    assert.ok(!shown.text.includes(MCP_TOKEN));

    const route = await h.client('mcpDirectory').getMcpServer({
      organisationId: h.organisationId,
      idOrSlug: server.body.slug,
    });
    assert.equal(route.server?.enabled, true);
    assert.equal(route.server?.auth?.headers.Authorization, `Bearer ${MCP_TOKEN}`);

    secrets.storeDown = true;
    try {
      const down = await h.client('mcpDirectory').getMcpServer({
        organisationId: h.organisationId,
        idOrSlug: server.body.slug,
      });
      assert.equal(down.server?.enabled, false, 'without its credentials the server refuses calls');
      assert.deepEqual(down.server?.auth?.headers, {});
      const failed = await h.request('POST', `/v2/mcp-servers/${server.body.id}/test`, { key: h.adminKey });
      assert.equal(failed.body.success, false);
      assert.match(failed.body.error, /secret mappings cannot be resolved/);
    } finally {
      secrets.storeDown = false;
    }
  });

  test('OAuth client credentials may come from references; bad mappings are refused naming the field', async () => {
    const reference = addReference(h.organisationId, 'client-secret-from-vault');
    const oauth = await h.request('POST', '/v2/mcp-integrations', {
      key: h.adminKey,
      json: {
        name: 'Mapped OAuth MCP',
        url: mcpUpstream.endpoint,
        auth_type: 'oauth_client_credentials',
        transport: 'http',
        configurations: { token_url: `${mcpUpstream.url}/token`, client_id: 'switchyard' },
        secret_mappings: [{ target_field: 'oauth_client_secret', secret_reference_id: reference.id }],
      },
    });
    assert.equal(oauth.status, 200, oauth.text);

    const attempt = (secret_mappings: unknown) =>
      h.request('POST', '/v2/mcp-integrations', {
        key: h.adminKey,
        json: {
          name: 'Bad mapped MCP',
          url: mcpUpstream.endpoint,
          auth_type: 'none',
          transport: 'http',
          secret_mappings,
        },
      });
    const unknown = await attempt([
      { target_field: 'custom_headers.X-Key', secret_reference_id: 'missing-ref' },
    ]);
    assert.equal(unknown.status, 404, unknown.text);
    assert.equal(unknown.body.error.param, 'secret_mappings[0].secret_reference_id');
    const badTarget = await attempt([
      { target_field: 'configurations.token_url', secret_reference_id: reference.id },
    ]);
    assert.equal(badTarget.status, 400, badTarget.text);
    assert.equal(badTarget.body.error.param, 'secret_mappings[0].target_field');

    const noSecret = await h.request('POST', '/v2/mcp-integrations', {
      key: h.adminKey,
      json: {
        name: 'OAuth without secret',
        url: mcpUpstream.endpoint,
        auth_type: 'oauth_client_credentials',
        transport: 'http',
        configurations: { token_url: `${mcpUpstream.url}/token`, client_id: 'switchyard' },
      },
    });
    assert.equal(noSecret.status, 400, noSecret.text);
    assert.equal(noSecret.body.error.param, 'configurations.client_secret');
  });
});
