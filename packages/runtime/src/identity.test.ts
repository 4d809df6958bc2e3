import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { create } from '@bufbuild/protobuf';
import { identity } from '@switchyard/proto';
import { ApiKeyCache, type Principal } from '@switchyard/access';
import { MemoryEventBus, publishChange } from '@switchyard/adapters';
import { sha256Hex } from '@switchyard/core';
import { captureLogger } from '@switchyard/core/testing';
import type { ServiceClient } from './grpc.ts';
import { invalidateApiKeys, onChanges, principalFromProto, remoteWorkspaceLookup } from './identity.ts';

describe('identity helpers', () => {
  test('principalFromProto maps kinds, empty strings to null, 0 expiry to never and 0 creation time to unknown', () => {
    const p = principalFromProto(
      create(identity.ApiKeyPrincipalSchema, {
        apiKeyId: 'k',
        organisationId: 'o',
        kind: identity.ApiKeyKind.ORGANISATION_ADMIN,
        scopes: ['admin'],
        expiresAtMs: '0',
        name: 'root',
      }),
    );
    assert.deepEqual(p, {
      apiKeyId: 'k',
      organisationId: 'o',
      workspaceId: null,
      workspaceSlug: null,
      kind: 'organisation_admin',
      scopes: ['admin'],
      expiresAt: null,
      userId: null,
      name: 'root',
      organisationCreatedAt: null,
    });
    const expiring = principalFromProto(
      create(identity.ApiKeyPrincipalSchema, {
        kind: identity.ApiKeyKind.WORKSPACE_USER,
        workspaceId: 'w',
        expiresAtMs: '1763700000000',
        organisationCreatedAtMs: '1781827200000',
      }),
    );
    assert.equal(expiring?.kind, 'workspace_user');
    assert.equal(expiring?.workspaceId, 'w');
    assert.equal(expiring?.expiresAt, 1_763_700_000_000);
    assert.equal(expiring?.organisationCreatedAt, 1_781_827_200_000);
  });

  test('principalFromProto carries the defaults when there are any, and none otherwise', () => {
    const withDefaults = principalFromProto(
      create(identity.ApiKeyPrincipalSchema, {
        kind: identity.ApiKeyKind.WORKSPACE_SERVICE,
        workspaceId: 'w',
        defaultConfig: 'pc-default',
        defaultMetadata: { team: 'search' },
        configOverrideRefused: true,
      }),
    );
    assert.deepEqual(withDefaults?.defaults, {
      config: 'pc-default',
      metadata: { team: 'search' },
      allowConfigOverride: false,
    });
    const metadataOnly = principalFromProto(
      create(identity.ApiKeyPrincipalSchema, {
        kind: identity.ApiKeyKind.WORKSPACE_SERVICE,
        defaultMetadata: { env: 'ci' },
      }),
    );
    assert.deepEqual(metadataOnly?.defaults, {
      config: null,
      metadata: { env: 'ci' },
      allowConfigOverride: true,
    });
    const none = principalFromProto(
      create(identity.ApiKeyPrincipalSchema, { kind: identity.ApiKeyKind.WORKSPACE_SERVICE }),
    );
    assert.ok(none && !('defaults' in none));
  });

  test('principalFromProto refuses an unspecified key kind', () => {
    assert.equal(principalFromProto(create(identity.ApiKeyPrincipalSchema, { apiKeyId: 'k' })), null);
  });

  test('an api_key change event drops that key from the cache; other changes do not', async (t) => {
    const bus = new MemoryEventBus();
    t.after(() => bus.close());
    let lookups = 0;
    const p: Principal = {
      apiKeyId: 'k',
      organisationId: 'o',
      workspaceId: 'w',
      workspaceSlug: 'w',
      kind: 'workspace_service',
      scopes: [],
      expiresAt: null,
      userId: null,
      name: 'n',
      organisationCreatedAt: null,
    };
    const cache = new ApiKeyCache(async () => {
      lookups++;
      return p;
    });
    const subscription = await onChanges(bus, captureLogger().logger, 'gateway', invalidateApiKeys(cache));
    t.after(() => subscription.stop());
    await cache.resolve('sy-key');
    assert.equal(lookups, 1);

    publishChange(bus, { id: 'c1', entity: 'integration', entityId: 'i', cacheKey: sha256Hex('sy-key') });
    await bus.flush(1_000);
    await cache.resolve('sy-key');
    assert.equal(lookups, 1, 'a change to another entity keeps the key cached');

    publishChange(bus, { id: 'c2', entity: 'api_key', entityId: 'k', cacheKey: sha256Hex('sy-key') });
    await bus.flush(1_000);
    await cache.resolve('sy-key');
    assert.equal(lookups, 2, 'the key was looked up again after its change event');
  });

  test("a workspace change drops that workspace's keys, whose principals carry its defaults, and keeps the others", async (t) => {
    const bus = new MemoryEventBus();
    t.after(() => bus.close());
    const lookups: string[] = [];
    const principal = (workspaceId: string): Principal => ({
      apiKeyId: workspaceId,
      organisationId: 'o',
      workspaceId,
      workspaceSlug: workspaceId,
      kind: 'workspace_service',
      scopes: [],
      expiresAt: null,
      userId: null,
      name: 'n',
      organisationCreatedAt: null,
    });
    const byHash = new Map([
      [sha256Hex('sy-key-w1'), 'w1'],
      [sha256Hex('sy-key-w2'), 'w2'],
    ]);
    const cache = new ApiKeyCache(async (hash) => {
      const workspaceId = byHash.get(hash)!;
      lookups.push(workspaceId);
      return principal(workspaceId);
    });
    const subscription = await onChanges(bus, captureLogger().logger, 'gateway', invalidateApiKeys(cache));
    t.after(() => subscription.stop());
    await cache.resolve('sy-key-w1');
    await cache.resolve('sy-key-w2');

    publishChange(bus, { id: 'c3', entity: 'workspace', entityId: 'w1', workspaceId: 'w1' });
    await bus.flush(1_000);
    await cache.resolve('sy-key-w1');
    await cache.resolve('sy-key-w2');
    assert.deepEqual(lookups, ['w1', 'w2', 'w1']);
  });

  test("a workspace change drops that workspace from JWT callers' lookups, with its default config, and what was not found", async (t) => {
    const bus = new MemoryEventBus();
    t.after(() => bus.close());
    const asked: string[] = [];
    const defaults = new Map([
      ['w1', 'pc-first'],
      ['w2', ''],
    ]);
    const client = {
      resolveWorkspace: async ({ workspace }: { workspace: string }) => {
        asked.push(workspace);
        const defaultConfig = defaults.get(workspace);
        return defaultConfig === undefined
          ? create(identity.ResolveWorkspaceResponseSchema, {})
          : create(identity.ResolveWorkspaceResponseSchema, {
              workspaceId: workspace,
              workspaceSlug: workspace,
              organisationId: 'o',
              defaultConfig,
            });
      },
    } as unknown as ServiceClient<typeof identity.IdentityService>;
    const workspaces = remoteWorkspaceLookup(client);
    const cache = new ApiKeyCache(async () => null);
    const subscription = await onChanges(
      bus,
      captureLogger().logger,
      'gateway',
      invalidateApiKeys(cache, workspaces),
    );
    t.after(() => subscription.stop());

    assert.equal((await workspaces('o', 'w1'))?.defaultConfig, 'pc-first');
    assert.equal((await workspaces('o', 'w2'))?.defaultConfig, null);
    assert.equal(await workspaces('o', 'w3'), null);
    await workspaces('o', 'w1');
    assert.deepEqual(asked, ['w1', 'w2', 'w3'], 'answers are kept');

    defaults.set('w1', 'pc-second');
    defaults.set('w3', '');
    publishChange(bus, { id: 'c4', entity: 'workspace', entityId: 'w1', workspaceId: 'w1' });
    await bus.flush(1_000);
    assert.equal((await workspaces('o', 'w1'))?.defaultConfig, 'pc-second');
    assert.equal((await workspaces('o', 'w2'))?.defaultConfig, null);
    assert.equal((await workspaces('o', 'w3'))?.id, 'w3');
    assert.deepEqual(
      asked,
      ['w1', 'w2', 'w3', 'w1', 'w3'],
      'only w1 and the workspace not found were asked again',
    );
  });
});
