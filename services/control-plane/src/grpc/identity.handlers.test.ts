import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sha256Hex } from '@switchyard/core';
import { createGrpcClient, remotePrincipalLookup } from '@switchyard/runtime';
import { identity } from '@switchyard/proto';
import { startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { keyMaterialOf } from '../domain/api-keys.ts';
import { controlPlane } from '../service.ts';
import { IdentityRepository } from '../store/identity.repository.ts';

let h: ServiceHarness;

before(async () => {
  h = await startServiceHarness({ services: [controlPlane] });
});
after(() => h.close());

const resolve = (key: string) => h.client('identity').resolveApiKey({ keyHash: sha256Hex(key) });

test('ResolveApiKey answers with the principal of a workspace key', async () => {
  const { principal } = await resolve(h.workspaceKey);
  assert.ok(principal);
  assert.equal(principal.organisationId, h.organisationId);
  assert.equal(principal.workspaceId, h.workspaceId);
  assert.equal(principal.workspaceSlug, 'default');
  assert.equal(principal.kind, identity.ApiKeyKind.WORKSPACE_SERVICE);
  assert.equal(principal.expiresAtMs, '0');
});

test('ResolveApiKey answers with an organisation admin principal bound to no workspace', async () => {
  const { principal } = await resolve(h.adminKey);
  assert.ok(principal);
  assert.equal(principal.kind, identity.ApiKeyKind.ORGANISATION_ADMIN);
  assert.equal(principal.workspaceId, '');
});

test('ResolveApiKey answers with when the key’s organisation was created', async () => {
  const repo = new IdentityRepository(h.db('control-plane').manager);
  const organisation = await repo.createOrganisation('Old Inc', 'old-inc');
  const createdAt = Date.parse('2026-06-18T23:59:59.999Z');
  await h
    .db('control-plane')
    .query(`UPDATE control_plane.organisations SET created_at = $2 WHERE id = $1`, [
      organisation.id,
      new Date(createdAt),
    ]);
  const key = 'sy-admin-of-an-older-organisation-0000';
  await repo.insertApiKey({
    organisationId: organisation.id,
    workspaceId: null,
    kind: 'organisation_admin',
    name: 'Old admin',
    description: null,
    scopes: [],
    userId: null,
    expiresAt: null,
    ...keyMaterialOf(key, 'sy-'),
  });

  assert.equal((await resolve(key)).principal?.organisationCreatedAtMs, String(createdAt));
  const principal = await remotePrincipalLookup(h.client('identity'))(sha256Hex(key));
  assert.equal(principal?.organisationCreatedAt, createdAt);
  assert.equal(principal?.organisationId, organisation.id);

  const [bootstrapped] = await h
    .db('control-plane')
    .query(`SELECT created_at FROM control_plane.organisations WHERE id = $1`, [h.organisationId]);
  const workspacePrincipal = (await resolve(h.workspaceKey)).principal;
  assert.equal(workspacePrincipal?.organisationCreatedAtMs, String(bootstrapped.created_at.getTime()));
  assert.equal(workspacePrincipal?.workspaceSlug, 'default');
});

test('ResolveApiKey answers with no principal for an unknown key', async () => {
  const { principal } = await resolve('sy-never-issued');
  assert.equal(principal, undefined);
});

test('revoking a key makes ResolveApiKey answer with no principal and the HTTP API refuse it', async () => {
  const created = await h.request('POST', '/v2/api-keys/workspace/service', {
    key: h.adminKey,
    json: { name: 'Short-lived', workspace_id: h.workspaceId },
  });
  const { id, key } = created.body as { id: string; key: string };
  assert.equal((await resolve(key)).principal?.apiKeyId, id);
  assert.equal((await h.request('GET', '/v2/workspaces', { key })).status, 200);

  const revoked = await h.request('DELETE', `/v2/api-keys/${id}`, { key: h.adminKey });
  assert.equal(revoked.status, 200);

  assert.equal((await resolve(key)).principal, undefined);
  assert.equal((await h.request('GET', '/v2/workspaces', { key })).status, 401);
});

test('an expired key resolves to no principal and is refused', async () => {
  const key = 'sy-expired-workspace-key-0000000000';
  await new IdentityRepository(h.db('control-plane').manager).insertApiKey({
    organisationId: h.organisationId,
    workspaceId: h.workspaceId,
    kind: 'workspace_service',
    name: 'Expired',
    description: null,
    scopes: [],
    userId: null,
    expiresAt: new Date(Date.now() - 1_000),
    ...keyMaterialOf(key, 'sy-'),
  });
  assert.equal((await resolve(key)).principal, undefined);
  assert.equal((await h.request('GET', '/v2/workspaces', { key })).status, 401);
});

test("ResolveWorkspace answers with the workspace's default config by slug, and with none once it is cleared", async () => {
  const created = await h.request('POST', '/v2/configs', {
    key: h.adminKey,
    json: { name: 'Workspace default', workspace_id: h.workspaceId, config: { provider: '@mock' } },
  });
  assert.equal(created.status, 200, created.text);
  const slug = created.body.data.slug as string;
  const resolveWorkspace = () =>
    h.client('identity').resolveWorkspace({ organisation: h.organisationId, workspace: 'default' });
  assert.equal((await resolveWorkspace()).defaultConfig, '');

  const set = await h.request('PUT', `/v2/workspaces/${h.workspaceId}`, {
    key: h.adminKey,
    json: { defaults: { config: created.body.data.id } },
  });
  assert.equal(set.status, 200, set.text);
  const found = await resolveWorkspace();
  assert.equal(found.workspaceId, h.workspaceId);
  assert.equal(found.defaultConfig, slug);

  const cleared = await h.request('PUT', `/v2/workspaces/${h.workspaceId}`, {
    key: h.adminKey,
    json: { defaults: { config: null } },
  });
  assert.equal(cleared.status, 200, cleared.text);
  assert.equal((await resolveWorkspace()).defaultConfig, '');
});

test('ResolveApiKey refuses callers without the service token', async () => {
  const stranger = createGrpcClient(identity.IdentityService, {
    address: h.grpcAddress('control-plane'),
    target: 'control-plane',
    security: { authToken: 'not-the-token' },
  });
  try {
    await assert.rejects(stranger.resolveApiKey({ keyHash: sha256Hex(h.adminKey) }), { status: 503 });
  } finally {
    stranger.close();
  }
});
