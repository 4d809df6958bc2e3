import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test, type TestContext } from 'node:test';
import { create, type MessageInitShape } from '@bufbuild/protobuf';
import { ServiceUnavailable } from '@switchyard/core';
import type { Principal } from '@switchyard/access';
import type { ServiceClient } from '@switchyard/runtime';
import { captureLogger, settleLogs } from '@switchyard/core/testing';
import { admin, events } from '@switchyard/proto';
import { OrganisationSettingsCache, invalidateOrganisationSettings } from './organisation-settings.ts';

type Answer = MessageInitShape<typeof admin.GetOrganisationSettingsResponseSchema>;

/** An admin stand-in: answers from a table of choices, counts calls, and can be taken down. */
function fakeAdmin() {
  const state = {
    choices: new Map<string, boolean>(),
    /** The default guardrails and exclusions admin answers with, by organisation. */
    guardrails: new Map<string, Answer>(),
    down: false,
    calls: [] as Array<{ organisationId: string; deadlineMs: number | undefined }>,
  };
  const client: ServiceClient<typeof admin.OrganisationSettingsService> = {
    async getOrganisationSettings(request, options) {
      const organisationId = request.organisationId ?? '';
      state.calls.push({ organisationId, deadlineMs: options?.deadlineMs });
      if (state.down) throw new ServiceUnavailable('admin is unavailable.');
      const answer: Answer = { ...state.guardrails.get(organisationId) };
      const choice = state.choices.get(organisationId);
      if (choice !== undefined) answer.blockInlineConfig = choice;
      return create(admin.GetOrganisationSettingsResponseSchema, answer);
    },
    close() {},
    async waitForReady() {},
  };
  const callsFor = (organisationId: string) =>
    state.calls.filter((c) => c.organisationId === organisationId).length;
  return { state, client, callsFor };
}

const CREATED_AFTER = Date.parse('2026-07-01T00:00:00Z');
const CREATED_BEFORE = Date.parse('2026-06-18T23:59:59Z');

function principalOf(organisationCreatedAt: number | null, organisationId: string = randomUUID()): Principal {
  return {
    apiKeyId: randomUUID(),
    organisationId,
    workspaceId: randomUUID(),
    workspaceSlug: 'default',
    kind: 'workspace_service',
    scopes: [],
    expiresAt: null,
    userId: null,
    name: 'Test key',
    organisationCreatedAt,
  };
}

function cacheWith(fake: ReturnType<typeof fakeAdmin>, forced = false) {
  const captured = captureLogger();
  return { cache: new OrganisationSettingsCache(fake.client, { forced, logger: captured.logger }), captured };
}

describe('OrganisationSettingsCache', () => {
  test('without a choice, blocks for organisations created from 2026-06-19 only', async () => {
    const fake = fakeAdmin();
    const { cache } = cacheWith(fake);
    assert.equal(await cache.blockInlineConfig(principalOf(CREATED_AFTER)), true);
    assert.equal(await cache.blockInlineConfig(principalOf(CREATED_BEFORE)), false);
    assert.equal(await cache.blockInlineConfig(principalOf(null)), false);
  });

  test('the organisation’s choice wins over its default', async () => {
    const fake = fakeAdmin();
    const { cache } = cacheWith(fake);
    const newer = principalOf(CREATED_AFTER);
    const older = principalOf(CREATED_BEFORE);
    fake.state.choices.set(newer.organisationId, false);
    fake.state.choices.set(older.organisationId, true);
    assert.equal(await cache.blockInlineConfig(newer), false);
    assert.equal(await cache.blockInlineConfig(older), true);
  });

  test('asks admin once per organisation, with a 2 s deadline, until the TTL passes', async (t: TestContext) => {
    t.mock.timers.enable({ apis: ['Date'], now: CREATED_AFTER });
    const fake = fakeAdmin();
    const { cache } = cacheWith(fake);
    const caller = principalOf(CREATED_BEFORE);
    const colleague = { ...principalOf(CREATED_BEFORE, caller.organisationId), apiKeyId: randomUUID() };
    fake.state.choices.set(caller.organisationId, true);

    const concurrent = await Promise.all([1, 2, 3].map(() => cache.blockInlineConfig(caller)));
    assert.deepEqual(concurrent, [true, true, true]);
    assert.equal(await cache.blockInlineConfig(colleague), true);
    assert.deepEqual(fake.state.calls, [{ organisationId: caller.organisationId, deadlineMs: 2_000 }]);

    fake.state.choices.set(caller.organisationId, false);
    t.mock.timers.tick(59_000);
    assert.equal(await cache.blockInlineConfig(caller), true, 'served from memory within the TTL');
    assert.equal(fake.callsFor(caller.organisationId), 1);
    t.mock.timers.tick(2_000);
    assert.equal(await cache.blockInlineConfig(caller), false, 'asked again after the TTL');
    assert.equal(fake.callsFor(caller.organisationId), 2);
  });

  test('invalidate drops one organisation’s choice at once, and only its own', async () => {
    const fake = fakeAdmin();
    const { cache } = cacheWith(fake);
    const changed = principalOf(CREATED_AFTER);
    const untouched = principalOf(CREATED_AFTER);
    assert.equal(await cache.blockInlineConfig(changed), true);
    assert.equal(await cache.blockInlineConfig(untouched), true);

    fake.state.choices.set(changed.organisationId, false);
    cache.invalidate(changed.organisationId);
    assert.equal(await cache.blockInlineConfig(changed), false);
    assert.equal(await cache.blockInlineConfig(untouched), true);
    assert.equal(fake.callsFor(changed.organisationId), 2);
    assert.equal(fake.callsFor(untouched.organisationId), 1);
  });

  test('an organisation_settings change event invalidates that organisation; other changes do not', async () => {
    const fake = fakeAdmin();
    const { cache } = cacheWith(fake);
    const onChange = invalidateOrganisationSettings(cache);
    const caller = principalOf(CREATED_AFTER);
    await cache.blockInlineConfig(caller);

    const change = (entity: string) =>
      create(events.ChangeEventSchema, {
        entity,
        entityId: caller.organisationId,
        organisationId: caller.organisationId,
        action: events.ChangeAction.UPDATED,
        cacheKey: caller.organisationId,
      });
    onChange(change('integration'));
    await cache.blockInlineConfig(caller);
    assert.equal(fake.callsFor(caller.organisationId), 1);

    fake.state.choices.set(caller.organisationId, false);
    onChange(change('organisation_settings'));
    assert.equal(await cache.blockInlineConfig(caller), false);
    assert.equal(fake.callsFor(caller.organisationId), 2);
  });

  test('forced on by BLOCK_INLINE_CONFIG, blocks every organisation without asking admin', async () => {
    const fake = fakeAdmin();
    fake.state.down = true;
    const { cache } = cacheWith(fake, true);
    const optedOut = principalOf(CREATED_AFTER);
    fake.state.choices.set(optedOut.organisationId, false);
    for (const principal of [optedOut, principalOf(CREATED_BEFORE), principalOf(null)]) {
      assert.equal(await cache.blockInlineConfig(principal), true);
    }
    assert.equal(fake.state.calls.length, 0);
  });

  describe('while admin cannot answer', () => {
    test('fails closed where the default is on, and applies the default where it is off', async () => {
      const fake = fakeAdmin();
      const { cache } = cacheWith(fake);
      const newer = principalOf(CREATED_AFTER);
      const older = principalOf(CREATED_BEFORE);
      fake.state.choices.set(newer.organisationId, false);
      fake.state.choices.set(older.organisationId, true);
      fake.state.down = true;
      assert.equal(await cache.blockInlineConfig(newer), true);
      assert.equal(await cache.blockInlineConfig(older), false);
      assert.equal(await cache.blockInlineConfig(principalOf(null)), false);
    });

    test('asks again at most every 5 s per organisation, and uses the choice once admin is back', async (t: TestContext) => {
      t.mock.timers.enable({ apis: ['Date'], now: CREATED_AFTER });
      const fake = fakeAdmin();
      const { cache } = cacheWith(fake);
      const caller = principalOf(CREATED_AFTER);
      fake.state.choices.set(caller.organisationId, false);
      fake.state.down = true;
      for (let i = 0; i < 10; i++) assert.equal(await cache.blockInlineConfig(caller), true);
      assert.equal(fake.callsFor(caller.organisationId), 1);

      fake.state.down = false;
      t.mock.timers.tick(5_001);
      assert.equal(await cache.blockInlineConfig(caller), false);
      assert.equal(fake.callsFor(caller.organisationId), 2);
    });

    test('warns at most once a minute', async (t: TestContext) => {
      t.mock.timers.enable({ apis: ['Date'], now: CREATED_AFTER });
      const fake = fakeAdmin();
      const { cache, captured } = cacheWith(fake);
      fake.state.down = true;
      const warnings = async () => {
        await settleLogs();
        return captured.lines().filter((line) => line.level === 'warn');
      };

      for (let i = 0; i < 5; i++) await cache.blockInlineConfig(principalOf(CREATED_AFTER));
      assert.equal(fake.state.calls.length, 5);
      const [first, ...rest] = await warnings();
      assert.equal(rest.length, 0);
      assert.equal(first?.message, 'organisation settings unavailable; applying defaults');
      assert.match(String(first?.error), /admin is unavailable/);

      t.mock.timers.tick(59_000);
      await cache.blockInlineConfig(principalOf(CREATED_AFTER));
      assert.equal((await warnings()).length, 1);
      t.mock.timers.tick(1_000);
      await cache.blockInlineConfig(principalOf(CREATED_AFTER));
      assert.equal((await warnings()).length, 2);
    });
  });
});

describe('OrganisationSettingsCache.guardrailDefaults', () => {
  const defaults: Answer = {
    inputGuardrailIds: ['in-1', 'in-2'],
    outputGuardrailIds: ['out-1'],
    inputGuardrailExcludedWorkspaceIds: ['exempt-from-input'],
    outputGuardrailExcludedWorkspaceIds: ['exempt-from-output'],
  };
  const inWorkspace = (organisationId: string, workspaceId: string): Principal => ({
    ...principalOf(CREATED_AFTER, organisationId),
    workspaceId,
  });

  test("the organisation's defaults of each phase, less a phase the caller's workspace is exempted from", async () => {
    const fake = fakeAdmin();
    const { cache } = cacheWith(fake);
    const organisationId = randomUUID();
    fake.state.guardrails.set(organisationId, defaults);
    assert.deepEqual(await cache.guardrailDefaults(inWorkspace(organisationId, 'any')), {
      input: ['in-1', 'in-2'],
      output: ['out-1'],
    });
    assert.deepEqual(await cache.guardrailDefaults(inWorkspace(organisationId, 'exempt-from-input')), {
      input: [],
      output: ['out-1'],
    });
    assert.deepEqual(await cache.guardrailDefaults(inWorkspace(organisationId, 'exempt-from-output')), {
      input: ['in-1', 'in-2'],
      output: [],
    });
    assert.deepEqual(await cache.guardrailDefaults(principalOf(CREATED_AFTER)), { input: [], output: [] });
    assert.equal(fake.callsFor(organisationId), 1, 'read once, then served from memory');
  });

  test('admin down before they were ever read: a 503 guardrails_unavailable, never an empty list', async () => {
    const fake = fakeAdmin();
    const { cache } = cacheWith(fake);
    const organisationId = randomUUID();
    fake.state.guardrails.set(organisationId, defaults);
    fake.state.down = true;
    await assert.rejects(cache.guardrailDefaults(inWorkspace(organisationId, 'any')), {
      status: 503,
      code: 'guardrails_unavailable',
    });
  });

  test('admin down after they were read: the last known serve, even once dropped by a change event', async () => {
    const fake = fakeAdmin();
    const { cache } = cacheWith(fake);
    const organisationId = randomUUID();
    fake.state.guardrails.set(organisationId, defaults);
    const principal = inWorkspace(organisationId, 'exempt-from-output');
    assert.deepEqual(await cache.guardrailDefaults(principal), { input: ['in-1', 'in-2'], output: [] });
    fake.state.down = true;
    cache.invalidate(organisationId);
    assert.deepEqual(await cache.guardrailDefaults(principal), { input: ['in-1', 'in-2'], output: [] });
    assert.ok(fake.callsFor(organisationId) >= 2, 'admin was asked again');
  });
});
