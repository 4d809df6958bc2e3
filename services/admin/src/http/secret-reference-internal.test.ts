import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fromBinary } from '@bufbuild/protobuf';
import { AppError } from '@switchyard/core';
import { Topics } from '@switchyard/adapters';
import { events } from '@switchyard/proto';
import { controlPlane } from '@switchyard/control-plane';
import { IdentityRepository } from '@switchyard/control-plane/testing';
import { listenOnLoopback, startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { adminService } from '../service.ts';

/**
 * Secrets Switchyard keeps itself (`internal`), secret URIs, json values addressed by a JSON
 * pointer, and ResolveSecretMappings, control-plane's way to resolve its mappings.
 */

let h: ServiceHarness;
let otherWorkspaceId: string;
let otherOrganisationId: string;
let vaultUrl: string;
let closeVault: () => Promise<void>;

/** Every value given to an internal reference: none may appear in an answer, an event or a row. */
const VALUES = {
  one: 'sk-internal-value-one-000000000',
  two: 'sk-internal-value-two-000000000',
  password: 'pw-nested-in-json-0000000',
  field: 'sk-internal-object-field-0000',
  rotated: 'sk-internal-rotated-00000000',
};

before(async () => {
  // A Vault that refuses every token: a manager failure, never a value.
  const vault = createServer((_req, res) => {
    res.writeHead(403, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ errors: ['permission denied'] }));
  });
  const listening = await listenOnLoopback(vault);
  vaultUrl = listening.url;
  closeVault = listening.close;
  h = await startServiceHarness({
    services: [controlPlane, adminService],
    env: { TRUSTED_CUSTOM_HOSTS: '127.0.0.1' },
    // No test resolves a name for real.
    resolve: async (host) => (host === 'kv.example.com' ? ['93.184.216.34'] : []),
  });
  const repo = new IdentityRepository(h.db('control-plane').manager);
  otherOrganisationId = (await repo.createOrganisation('Other Internal Inc', 'other-internal-inc')).id;
  otherWorkspaceId = (
    await repo.createWorkspace({
      organisationId: h.organisationId,
      name: 'Internal elsewhere',
      slug: 'internal-elsewhere',
      description: null,
    })
  ).id;
});
after(async () => {
  await h?.close();
  await closeVault?.();
});

const answers: string[] = [];
async function api(method: string, path: string, json?: unknown) {
  const res = await h.request(method, path, { key: h.adminKey, json });
  answers.push(res.text);
  return res;
}
const errorOf = (res: { body: unknown }) =>
  (res.body as { error: { message: string; param: string | null; code: string | null } }).error;

async function createInternal(body: Record<string, unknown>) {
  const res = await api('POST', '/v1/secret-references', { manager_type: 'internal', ...body });
  assert.equal(res.status, 200, res.text);
  return res.body as { id: string; slug: string };
}

const vaultAuth = () => ({
  vault_auth_type: 'token',
  vault_addr: vaultUrl,
  vault_token: 'hvs.wrong-0000000000',
});

/** ResolveSecretMappings as `caller` (control-plane unless said). */
function resolveMappings(
  mappings: Array<
    Partial<Record<'targetField' | 'secretReferenceId' | 'secretKey' | 'valueFormat' | 'jsonPointer', string>>
  >,
  options: {
    checkOnly?: boolean;
    workspaceId?: string;
    organisationId?: string;
    caller?: 'gateway' | 'control-plane';
  } = {},
) {
  return h.client('secretReferences', options.caller ?? 'control-plane').resolveSecretMappings({
    organisationId: options.organisationId ?? h.organisationId,
    workspaceId: options.workspaceId ?? h.workspaceId,
    checkOnly: options.checkOnly ?? false,
    mappings: mappings.map((mapping) => ({ targetField: 'token', ...mapping })),
  });
}

async function refusal(call: Promise<unknown>): Promise<AppError> {
  const err = await call.then(
    () => assert.fail('it was answered'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof AppError, String(err));
  return err;
}

const changes = () =>
  h.bus.log(Topics.changes).map((message) => fromBinary(events.ChangeEventSchema, message.value));

describe('internal secret references', () => {
  test('create, read, list, rotate and delete: the value is only ever answered masked', async () => {
    const created = await createInternal({
      name: 'Internal one',
      slug: 'internal-one',
      secret_value: VALUES.one,
    });
    const shown = await api('GET', '/v1/secret-references/internal-one');
    assert.equal(shown.status, 200, shown.text);
    const detail = shown.body as Record<string, unknown>;
    assert.equal(detail.id, created.id);
    assert.equal(detail.manager_type, 'internal');
    assert.equal(detail.secret_uri, 'internal://internal-one');
    assert.equal(detail.secret_value, '********');
    assert.equal(detail.secret_path, null);
    assert.deepEqual(detail.auth_config, {});

    await createInternal({
      name: 'Internal object',
      slug: 'internal-object',
      secret_value: { api_key: VALUES.field, port: 5432, tls: true },
    });
    const object = (await api('GET', '/v1/secret-references/internal-object')).body as Record<
      string,
      unknown
    >;
    assert.deepEqual(object.secret_value, { api_key: '********', port: '********', tls: '********' });

    const listed = await api(
      'GET',
      '/v1/secret-references?manager_type=internal&search=internal&page_size=100',
    );
    assert.equal(listed.status, 200, listed.text);
    const slugs = (listed.body as { data: Array<{ slug: string; secret_uri: string }> }).data;
    assert.deepEqual(
      slugs.filter((item) => item.slug.startsWith('internal-')).map((item) => [item.slug, item.secret_uri]),
      [
        ['internal-one', 'internal://internal-one'],
        ['internal-object', 'internal://internal-object'],
      ],
    );

    const rotated = await api('PUT', '/v1/secret-references/internal-one', {
      secret_value: VALUES.two,
      description: 'rotated',
    });
    assert.equal(rotated.status, 200, rotated.text);
    assert.equal((rotated.body as Record<string, unknown>).secret_value, '********');
    assert.equal((rotated.body as Record<string, unknown>).description, 'rotated');

    const rows = (await h
      .db('admin')
      .query(
        `SELECT encrypted_value FROM admin.secret_references WHERE manager_type = 'internal'`,
      )) as Array<{
      encrypted_value: string;
    }>;
    assert.ok(rows.length >= 2);
    for (const row of rows)
      for (const value of Object.values(VALUES))
        assert.ok(!row.encrypted_value.includes(value), 'stored in clear');

    assert.equal((await api('DELETE', '/v1/secret-references/internal-object')).status, 200);
    assert.equal((await api('GET', '/v1/secret-references/internal-object')).status, 404);
  });

  test('fields the manager does not take, a missing or oversized value are refused (400 naming the field)', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ manager_type: 'internal', secret_value: 'x', auth_config: {} }, 'auth_config'],
      [{ manager_type: 'internal', secret_value: 'x', secret_path: 'a/b' }, 'secret_path'],
      [{ manager_type: 'internal' }, 'secret_value'],
      [{ manager_type: 'internal', secret_value: '' }, 'secret_value'],
      [{ manager_type: 'internal', secret_value: { nested: { no: 'x' } } }, 'secret_value.nested'],
      [{ manager_type: 'internal', secret_value: 'x'.repeat(64 * 1024 + 1) }, 'secret_value'],
      [{ manager_type: 'internal', secret_value: ['a'] }, 'secret_value'],
      [
        {
          manager_type: 'hashicorp_vault',
          auth_config: vaultAuth(),
          secret_path: 'secret/a/b',
          secret_value: 'x',
        },
        'secret_value',
      ],
      [{ manager_type: 'hashicorp_vault', secret_path: 'secret/a/b' }, 'auth_config'],
      [{ manager_type: 'hashicorp_vault', auth_config: vaultAuth() }, 'secret_path'],
      [{ secret_path: 'secret/a/b' }, 'manager_type'],
    ];
    for (const [body, param] of cases) {
      const res = await api('POST', '/v1/secret-references', { name: 'refused', ...body });
      assert.equal(res.status, 400, `${JSON.stringify(body).slice(0, 200)}: ${res.text.slice(0, 300)}`);
      assert.equal(errorOf(res).param, param, res.text.slice(0, 300));
    }
    // Exactly 64 KB is kept.
    await createInternal({ name: 'largest', slug: 'internal-largest', secret_value: 'y'.repeat(64 * 1024) });

    await createInternal({ name: 'update refusals', slug: 'internal-update', secret_value: 'v' });
    for (const [body, param] of [
      [{ auth_config: { vault_token: 'x' } }, 'auth_config'],
      [{ secret_path: 'a/b' }, 'secret_path'],
      [{ secret_value: { deep: [1] } }, 'secret_value.deep'],
    ] as const) {
      const res = await api('PUT', '/v1/secret-references/internal-update', body);
      assert.equal(res.status, 400, res.text);
      assert.equal(errorOf(res).param, param);
    }
    const vault = await api('POST', '/v1/secret-references', {
      name: 'vault',
      slug: 'vault-refuses-value',
      manager_type: 'hashicorp_vault',
      auth_config: vaultAuth(),
      secret_path: 'secret/a/b',
    });
    assert.equal(vault.status, 200, vault.text);
    const given = await api('PUT', '/v1/secret-references/vault-refuses-value', { secret_value: 'x' });
    assert.equal(given.status, 400, given.text);
    assert.equal(errorOf(given).param, 'secret_value');
  });

  test("rotation changes what an integration's mapping resolves to, and announces the reference and the integration", async () => {
    const ref = await createInternal({
      name: 'Rotating internal',
      slug: 'internal-rotating',
      secret_value: VALUES.one,
    });
    const integration = await api('POST', '/v1/integrations', {
      ai_provider_id: 'openai',
      name: 'internal mapped',
      slug: 'internal-mapped',
      secret_mappings: [{ target_field: 'key', secret_reference_id: 'internal-rotating' }],
    });
    assert.equal(integration.status, 200, integration.text);
    const credentials = () =>
      h.client('integrations').getIntegrationCredentials({
        organisationId: h.organisationId,
        workspaceId: h.workspaceId,
        slug: 'internal-mapped',
      });
    assert.equal((await credentials()).integration?.apiKey, VALUES.one);

    const before = changes().length;
    const rotated = await api('PUT', `/v1/secret-references/${ref.id}`, { secret_value: VALUES.rotated });
    assert.equal(rotated.status, 200, rotated.text);
    assert.equal((await credentials()).integration?.apiKey, VALUES.rotated);

    const announced = changes().slice(before);
    const reference = announced.filter((change) => change.entity === 'secret_reference');
    assert.deepEqual(
      reference.map((change) => [change.entityId, change.organisationId, change.action]),
      [[ref.id, h.organisationId, events.ChangeAction.UPDATED]],
    );
    assert.deepEqual(
      announced.filter((change) => change.entity === 'integration').map((change) => change.cacheKey),
      [`${h.organisationId}:internal-mapped`],
    );

    // A refused update announces nothing.
    const quiet = changes().length;
    assert.equal((await api('PUT', `/v1/secret-references/${ref.id}`, { secret_path: 'x/y' })).status, 400);
    assert.equal(changes().length, quiet);

    assert.equal((await api('PUT', '/v1/integrations/internal-mapped', { secret_mappings: [] })).status, 200);
    const beforeDelete = changes().length;
    assert.equal((await api('DELETE', `/v1/secret-references/${ref.id}`)).status, 200);
    assert.deepEqual(
      changes()
        .slice(beforeDelete)
        .filter((change) => change.entity === 'secret_reference')
        .map((change) => [change.entityId, change.action]),
      [[ref.id, events.ChangeAction.DELETED]],
    );
  });
});

describe('secret URIs', () => {
  test('every reference answers its URI, by manager', async () => {
    const made: Array<[Record<string, unknown>, string]> = [
      [{ manager_type: 'internal', secret_value: 'x', slug: 'uri-internal' }, 'internal://uri-internal'],
      [
        {
          manager_type: 'hashicorp_vault',
          auth_config: vaultAuth(),
          secret_path: 'kv/team/openai',
          slug: 'uri-vault',
        },
        'vault://kv/team/openai',
      ],
      [
        {
          manager_type: 'aws_sm',
          auth_config: {
            aws_auth_type: 'accessKey',
            aws_access_key_id: 'AKIAURITESTKEY000001',
            aws_secret_access_key: 'aws-secret-uri-test-000000',
            aws_region: 'eu-west-1',
          },
          secret_path: 'prod/openai',
          slug: 'uri-aws',
        },
        'aws-sm://eu-west-1/prod/openai',
      ],
      [
        {
          manager_type: 'azure_kv',
          auth_config: {
            azure_auth_mode: 'entra',
            azure_entra_tenant_id: 'contoso.onmicrosoft.com',
            azure_entra_client_id: 'client',
            azure_entra_client_secret: 'azure-secret-uri-test-0000',
            azure_vault_url: 'https://KV.example.com/',
          },
          secret_path: 'openai-key',
          slug: 'uri-azure',
        },
        'azure-kv://kv.example.com/openai-key',
      ],
    ];
    for (const [body, uri] of made) {
      const res = await api('POST', '/v1/secret-references', { name: String(body.slug), ...body });
      assert.equal(res.status, 200, res.text);
      const shown = await api('GET', `/v1/secret-references/${String(body.slug)}`);
      assert.equal((shown.body as { secret_uri: string }).secret_uri, uri);
    }
  });

  test('a URI may name where the secret is instead of manager_type and secret_path', async () => {
    const vault = await api('POST', '/v1/secret-references', {
      name: 'from uri',
      slug: 'from-uri-vault',
      secret_uri: 'vault://secret/team/openai',
      auth_config: vaultAuth(),
    });
    assert.equal(vault.status, 200, vault.text);
    const shown = (await api('GET', '/v1/secret-references/from-uri-vault')).body as Record<string, unknown>;
    assert.deepEqual(
      [shown.manager_type, shown.secret_path, shown.secret_uri],
      ['hashicorp_vault', 'secret/team/openai', 'vault://secret/team/openai'],
    );

    const internal = await api('POST', '/v1/secret-references', {
      name: 'from internal uri',
      secret_uri: 'internal://from-uri-internal',
      secret_value: 'x',
    });
    assert.equal(internal.status, 200, internal.text);
    assert.equal((internal.body as { slug: string }).slug, 'from-uri-internal');

    const arn = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/openai-AbCdEf';
    const aws = await api('POST', '/v1/secret-references', {
      name: 'from aws uri',
      slug: 'from-uri-aws',
      manager_type: 'aws_sm',
      secret_path: arn,
      secret_uri: `aws-sm://us-east-1/${arn}`,
      auth_config: {
        aws_auth_type: 'accessKey',
        aws_access_key_id: 'AKIAURITESTKEY000001',
        aws_secret_access_key: 'aws-secret-uri-test-000000',
        aws_region: 'us-east-1',
      },
    });
    assert.equal(aws.status, 200, aws.text);
    const awsShown = (await api('GET', '/v1/secret-references/from-uri-aws')).body as Record<string, unknown>;
    assert.deepEqual([awsShown.secret_path, awsShown.secret_uri], [arn, `aws-sm://us-east-1/${arn}`]);
  });

  test('a fragment, an unknown scheme, a malformed URI or one that disagrees is refused (400 naming the rule)', async () => {
    const aws = {
      aws_auth_type: 'accessKey',
      aws_access_key_id: 'AKIAURITESTKEY000001',
      aws_secret_access_key: 'aws-secret-uri-test-000000',
      aws_region: 'eu-west-1',
    };
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ secret_uri: 'vault://secret/team/openai#v2', auth_config: vaultAuth() }, /no # fragment/],
      [
        { secret_uri: 'gcp-sm://project/secret', auth_config: vaultAuth() },
        /unknown scheme 'gcp-sm'.*vault:\/\//,
      ],
      [{ secret_uri: 'vault:/secret/team', auth_config: vaultAuth() }, /<scheme>:\/\/<authority>/],
      [{ secret_uri: 'vault://secret', auth_config: vaultAuth() }, /vault:\/\/<mount>\/<path>/],
      [{ secret_uri: 'vault://secret/a?version=2', auth_config: vaultAuth() }, /no query/],
      [{ secret_uri: 'vault://secret/a%2Fb', auth_config: vaultAuth() }, /percent-encoding/],
      [{ secret_uri: 'aws-sm://nowhere/prod/x', auth_config: aws }, /region such as us-east-1/],
      [{ secret_uri: 'internal://a/b', secret_value: 'x' }, /internal:\/\/<slug>/],
      [
        { secret_uri: 'vault://secret/team/openai', manager_type: 'aws_sm', auth_config: aws },
        /hashicorp_vault secret and 'manager_type' is 'aws_sm'/,
      ],
      [
        {
          secret_uri: 'vault://secret/team/openai',
          secret_path: 'secret/team/other',
          auth_config: vaultAuth(),
        },
        /path 'secret\/team\/openai' and 'secret_path' is 'secret\/team\/other'/,
      ],
      [
        { secret_uri: 'aws-sm://us-east-1/prod/x', auth_config: aws },
        /region 'us-east-1' and auth_config.aws_region is 'eu-west-1'/,
      ],
      [
        {
          secret_uri: 'azure-kv://other.example.com/openai-key',
          auth_config: {
            azure_auth_mode: 'entra',
            azure_entra_tenant_id: 'contoso.onmicrosoft.com',
            azure_entra_client_id: 'client',
            azure_entra_client_secret: 'azure-secret-uri-test-0000',
            azure_vault_url: 'https://kv.example.com',
          },
        },
        /vault host 'other.example.com'/,
      ],
      [
        { secret_uri: 'internal://one-slug', slug: 'another-slug', secret_value: 'x' },
        /slug 'one-slug' and 'slug' is 'another-slug'/,
      ],
    ];
    for (const [body, message] of cases) {
      const res = await api('POST', '/v1/secret-references', { name: 'bad uri', ...body });
      assert.equal(res.status, 400, `${String(body.secret_uri)}: ${res.text}`);
      assert.equal(errorOf(res).param, 'secret_uri', res.text);
      assert.match(errorOf(res).message, message);
    }
  });
});

describe('value_format json with a JSON pointer', () => {
  const document = JSON.stringify({
    db: { password: VALUES.password, 'a/b': 'slash', 'c~d': 'tilde' },
    keys: ['k0', 'k1'],
    port: 5432,
    tls: true,
    empty: {},
    none: null,
  });

  test('integration mappings take a pointer only with json; it must be RFC 6901', async () => {
    await createInternal({ name: 'pointer doc', slug: 'pointer-doc', secret_value: document });
    for (const [mapping, param] of [
      [{ json_pointer: '/db/password' }, 'secret_mappings[0].json_pointer'],
      [{ value_format: 'string', json_pointer: '/db/password' }, 'secret_mappings[0].json_pointer'],
      [{ value_format: 'json', json_pointer: 'db/password' }, 'secret_mappings[0].json_pointer'],
      [{ value_format: 'json', json_pointer: '/db/~2' }, 'secret_mappings[0].json_pointer'],
    ] as const) {
      const res = await api('POST', '/v1/integrations', {
        ai_provider_id: 'openai',
        name: 'pointer refused',
        slug: 'pointer-refused',
        secret_mappings: [{ target_field: 'key', secret_reference_id: 'pointer-doc', ...mapping }],
      });
      assert.equal(res.status, 400, res.text);
      assert.equal(errorOf(res).param, param, res.text);
    }
    const res = await api('POST', '/v1/integrations', {
      ai_provider_id: 'openai',
      name: 'pointer mapped',
      slug: 'pointer-mapped',
      secret_mappings: [
        {
          target_field: 'key',
          secret_reference_id: 'pointer-doc',
          value_format: 'json',
          json_pointer: '/db/password',
        },
      ],
    });
    assert.equal(res.status, 200, res.text);
    const shown = await api('GET', '/v1/integrations/pointer-mapped');
    assert.equal(
      (shown.body as { secret_mappings: Array<{ json_pointer: string }> }).secret_mappings[0]!.json_pointer,
      '/db/password',
    );
    const { integration } = await h.client('integrations').getIntegrationCredentials({
      organisationId: h.organisationId,
      workspaceId: h.workspaceId,
      slug: 'pointer-mapped',
    });
    assert.equal(integration?.apiKey, VALUES.password);
  });

  test('the pointer reaches nested members and array items; a missing path, a non-text target or a non-JSON value is refused naming the reference', async () => {
    await createInternal({ name: 'pointer values', slug: 'pointer-values', secret_value: document });
    await createInternal({ name: 'not json', slug: 'pointer-not-json', secret_value: 'not json {' });
    await createInternal({
      name: 'pointer object',
      slug: 'pointer-object',
      secret_value: { first: 'one', second: VALUES.field },
    });
    const ok: Array<[string, string, string?]> = [
      ['/db/password', VALUES.password],
      ['/db/a~1b', 'slash'],
      ['/db/c~0d', 'tilde'],
      ['/keys/1', 'k1'],
      ['/port', '5432'],
      ['/tls', 'true'],
      ['/second', VALUES.field, 'pointer-object'],
    ];
    for (const [jsonPointer, value, ref] of ok) {
      const answer = await resolveMappings([
        { secretReferenceId: ref ?? 'pointer-values', valueFormat: 'json', jsonPointer },
      ]);
      assert.deepEqual(answer.values, { token: value }, jsonPointer);
    }
    const refused: Array<[string, string, RegExp]> = [
      ['pointer-values', '/db/user', /'pointer-values'.*nothing at the json_pointer '\/db\/user'/],
      ['pointer-values', '/keys/2', /nothing at the json_pointer '\/keys\/2'/],
      ['pointer-values', '/keys/01', /nothing at the json_pointer/],
      ['pointer-values', '/port/0', /nothing at the json_pointer/],
      ['pointer-values', '/db', /'pointer-values'.*JSON object at '\/db', and 'token' takes text/],
      ['pointer-values', '/keys', /JSON array at '\/keys'/],
      ['pointer-values', '/none', /JSON null at '\/none'/],
      ['pointer-values', '/db/constructor', /nothing at the json_pointer/],
      ['pointer-values', '', /JSON object, and 'token' takes text/],
      ['pointer-not-json', '', /'pointer-not-json'.*not valid JSON/],
    ];
    for (const [ref, jsonPointer, message] of refused) {
      const err = await refusal(
        resolveMappings([{ secretReferenceId: ref, valueFormat: 'json', jsonPointer }]),
      );
      assert.equal(err.status, 400, err.message);
      assert.match(err.message, /^mappings\[0\] \('token'\)/);
      assert.match(err.message, message);
      assert.ok(!err.message.includes(VALUES.password) && !err.message.includes('not json {'), err.message);
    }
  });
});

describe('ResolveSecretMappings', () => {
  test('check_only answers the mappings canonical, without values; otherwise the values by target field', async () => {
    const one = await createInternal({ name: 'grpc one', slug: 'grpc-one', secret_value: VALUES.one });
    const object = await createInternal({
      name: 'grpc object',
      slug: 'grpc-object',
      secret_value: { api_key: VALUES.field, other: 'x' },
    });
    const mappings = [
      { targetField: 'headers.Authorization', secretReferenceId: 'grpc-one' },
      {
        targetField: 'oauth_client_secret',
        secretReferenceId: object.id,
        secretKey: 'api_key',
        valueFormat: 'string',
      },
    ];
    const checked = await resolveMappings(mappings, { checkOnly: true });
    assert.deepEqual(checked.values, {});
    assert.deepEqual(
      checked.mappings.map((m) => [
        m.targetField,
        m.secretReferenceId,
        m.secretKey,
        m.valueFormat,
        m.jsonPointer,
      ]),
      [
        ['headers.Authorization', one.id, '', 'string', ''],
        ['oauth_client_secret', object.id, 'api_key', 'string', ''],
      ],
    );
    const resolved = await resolveMappings(mappings);
    assert.deepEqual(resolved.values, {
      'headers.Authorization': VALUES.one,
      oauth_client_secret: VALUES.field,
    });
    // An organisation-level resource ("" workspace) takes references open to every workspace.
    assert.deepEqual((await resolveMappings(mappings, { workspaceId: '' })).values, resolved.values);
  });

  test('an unknown or foreign reference is NOT_FOUND, one not open to the workspace PERMISSION_DENIED, naming the mapping', async () => {
    await createInternal({
      name: 'grpc closed',
      slug: 'grpc-closed',
      secret_value: 'v',
      allowed_workspaces: [otherWorkspaceId],
    });
    const unknown = await refusal(
      resolveMappings([{ secretReferenceId: 'grpc-nothing' }], { checkOnly: true }),
    );
    assert.equal(unknown.status, 404);
    assert.match(unknown.message, /^mappings\[0\] \('token'\): secret reference 'grpc-nothing' not found/);
    const foreign = await refusal(
      resolveMappings([{ secretReferenceId: 'grpc-closed' }], {
        organisationId: otherOrganisationId,
        workspaceId: '',
      }),
    );
    assert.equal(foreign.status, 404);
    for (const workspaceId of [h.workspaceId, '']) {
      const closed = await refusal(
        resolveMappings(
          [{ targetField: 'x', secretReferenceId: 'grpc-one' }, { secretReferenceId: 'grpc-closed' }],
          {
            checkOnly: true,
            workspaceId,
          },
        ),
      );
      assert.equal(closed.status, 403, closed.message);
      assert.match(
        closed.message,
        /^mappings\[1\] \('token'\): secret reference 'grpc-closed' is not open to/,
      );
    }
    const open = await resolveMappings([{ secretReferenceId: 'grpc-closed' }], {
      workspaceId: otherWorkspaceId,
    });
    assert.deepEqual(open.values, { token: 'v' });
  });

  test('malformed mappings are INVALID_ARGUMENT naming the field', async () => {
    const cases: Array<
      [Parameters<typeof resolveMappings>[0], Parameters<typeof resolveMappings>[1], string]
    > = [
      [[{ targetField: 'bad field!', secretReferenceId: 'grpc-one' }], {}, 'mappings[0].target_field'],
      [[{ targetField: 'x'.repeat(129), secretReferenceId: 'grpc-one' }], {}, 'mappings[0].target_field'],
      [
        [
          { targetField: 'a', secretReferenceId: 'grpc-one' },
          { targetField: 'a', secretReferenceId: 'grpc-one' },
        ],
        {},
        'mappings[1].target_field',
      ],
      [[{ secretReferenceId: 'grpc-one', valueFormat: 'yaml' }], {}, 'mappings[0].value_format'],
      [[{ secretReferenceId: 'grpc-one', jsonPointer: '/a' }], {}, 'mappings[0].json_pointer'],
      [
        [{ secretReferenceId: 'grpc-one', valueFormat: 'json', jsonPointer: 'a' }],
        {},
        'mappings[0].json_pointer',
      ],
      [[{ secretReferenceId: 'grpc one' }], {}, 'mappings[0].secret_reference_id'],
      [[{ secretReferenceId: 'grpc-one' }], { organisationId: 'not-an-id' }, 'organisation_id'],
      [[{ secretReferenceId: 'grpc-one' }], { workspaceId: 'internal-elsewhere' }, 'workspace_id'],
    ];
    for (const [mappings, options, param] of cases) {
      const err = await refusal(resolveMappings(mappings, { checkOnly: true, ...options }));
      assert.equal(err.status, 400, err.message);
      assert.equal(err.param, param, err.message);
    }
  });

  test("a manager's failure is UNAVAILABLE naming the mapping, never a value", async () => {
    await api('POST', '/v1/secret-references', {
      name: 'grpc vault',
      slug: 'grpc-vault',
      manager_type: 'hashicorp_vault',
      auth_config: vaultAuth(),
      secret_path: 'secret/team/openai',
    });
    assert.equal(
      (await resolveMappings([{ secretReferenceId: 'grpc-vault' }], { checkOnly: true })).mappings.length,
      1,
    );
    const err = await refusal(resolveMappings([{ secretReferenceId: 'grpc-vault' }]));
    assert.equal(err.status, 503, err.message);
    const details = (err.cause as { details?: string } | undefined)?.details ?? '';
    assert.match(
      details,
      /^mappings\[0\] \('token'\): Secret reference 'grpc-vault' could not be resolved: Vault answered 403/,
    );
  });

  test('only control-plane may call it', async () => {
    const err = await refusal(resolveMappings([{ secretReferenceId: 'grpc-one' }], { caller: 'gateway' }));
    assert.match(err.message, /ResolveSecretMappings is not open to gateway/);
  });
});

describe('masking', () => {
  test('no answer, change event or audit event ever held an internal value', async () => {
    // Audit entries are published once the answer is sent: wait for the last ones.
    const deadline = Date.now() + 2_000;
    while (Date.now() < deadline && h.bus.log(Topics.audit).length === 0) await sleep(20);
    await sleep(100);
    const published = [...h.bus.log(Topics.audit), ...h.bus.log(Topics.changes)].map((message) =>
      Buffer.from(message.value).toString('latin1'),
    );
    assert.ok(h.bus.log(Topics.audit).length > 0, 'writes are audited');
    for (const text of [...answers, ...published])
      for (const value of Object.values(VALUES)) assert.ok(!text.includes(value), text.slice(0, 300));
  });
});
