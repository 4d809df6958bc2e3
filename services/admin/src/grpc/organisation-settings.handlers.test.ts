import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { controlPlane } from '@switchyard/control-plane';
import { GrpcStatus } from '@switchyard/runtime';
import { startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { adminService } from '../service.ts';

let h: ServiceHarness;

before(async () => {
  h = await startServiceHarness({ services: [controlPlane, adminService], allowInlineConfig: false });
});
after(() => h.close());

const settingsOf = (organisationId: string) =>
  h.client('organisationSettings').getOrganisationSettings({ organisationId });
const choose = async (block_inline_config: boolean | null) => {
  const res = await h.request('PUT', '/v1/admin/organisation/settings', {
    key: h.adminKey,
    json: { block_inline_config },
  });
  assert.equal(res.status, 200, res.text);
};

test('GetOrganisationSettings leaves block_inline_config unset while the organisation has not chosen', async () => {
  const response = await settingsOf(h.organisationId);
  assert.equal(response.blockInlineConfig, undefined);
  assert.equal((await settingsOf(randomUUID())).blockInlineConfig, undefined);
});

test('GetOrganisationSettings answers with the explicit choice, whatever the default', async () => {
  await choose(false);
  assert.equal((await settingsOf(h.organisationId)).blockInlineConfig, false);
  await choose(true);
  assert.equal((await settingsOf(h.organisationId)).blockInlineConfig, true);
  await choose(null);
  assert.equal((await settingsOf(h.organisationId)).blockInlineConfig, undefined);
});

test('GetOrganisationSettings refuses an organisation id that is not a UUID', async () => {
  await assert.rejects(settingsOf('not-a-uuid'), { status: 400, param: 'organisation_id' });
});

test('GetOrganisationSettings carries the default guardrail ids and the excluded workspaces of each phase', async () => {
  const empty = await settingsOf(h.organisationId);
  assert.deepEqual(
    [
      empty.inputGuardrailIds,
      empty.outputGuardrailIds,
      empty.inputGuardrailExcludedWorkspaceIds,
      empty.outputGuardrailExcludedWorkspaceIds,
    ],
    [[], [], [], []],
  );
  const created: string[] = [];
  for (const name of ['first default', 'second default']) {
    const res = await h.request('POST', '/v1/guardrails', {
      key: h.adminKey,
      json: {
        name,
        checks: [{ id: 'default.contains', parameters: { operator: 'none', words: ['classified'] } }],
        actions: { deny: true },
      },
    });
    assert.equal(res.status, 200, res.text);
    created.push(res.body.id as string);
  }
  const [first, second] = created as [string, string];
  const defaults = await h.request('PUT', '/v1/admin/organisation/defaults', {
    key: h.adminKey,
    json: { input_guardrails: [second, first], output_guardrails: [first] },
  });
  assert.equal(defaults.status, 200, defaults.text);
  const exclusion = await h.request('PUT', '/v1/workspace-exclusions/output-guardrails', {
    key: h.adminKey,
    json: { workspace_ids: [h.workspaceId] },
  });
  assert.equal(exclusion.status, 200, exclusion.text);

  const delivered = await settingsOf(h.organisationId);
  assert.deepEqual(delivered.inputGuardrailIds, [second, first]);
  assert.deepEqual(delivered.outputGuardrailIds, [first]);
  assert.deepEqual(delivered.inputGuardrailExcludedWorkspaceIds, []);
  assert.deepEqual(delivered.outputGuardrailExcludedWorkspaceIds, [h.workspaceId]);
  // Another organisation's answer carries none of them.
  assert.deepEqual((await settingsOf(randomUUID())).inputGuardrailIds, []);
});

test('GetOrganisationSettings answers the fields log exports may not hold, empty until chosen and once cleared', async () => {
  const deny = async (export_settings: { deniedFields: string[] } | null) => {
    const res = await h.request('PUT', '/v1/admin/organisation/settings', {
      key: h.adminKey,
      json: { export_settings },
    });
    assert.equal(res.status, 200, res.text);
  };
  assert.deepEqual((await settingsOf(h.organisationId)).exportDeniedFields, []);
  await deny({ deniedFields: ['response', 'request', 'cost'] });
  assert.deepEqual((await settingsOf(h.organisationId)).exportDeniedFields, ['response', 'request', 'cost']);
  // Another organisation's answer carries none of them.
  assert.deepEqual((await settingsOf(randomUUID())).exportDeniedFields, []);
  await deny(null);
  assert.deepEqual((await settingsOf(h.organisationId)).exportDeniedFields, []);
});

test('GetOrganisationSettings serves gateway and log-export, and refuses every other service', async () => {
  for (const caller of ['gateway', 'log-export'] as const) {
    const response = await h.client('organisationSettings', caller).getOrganisationSettings({
      organisationId: h.organisationId,
    });
    assert.deepEqual(response.exportDeniedFields, [], caller);
  }
  for (const caller of ['admin', 'control-plane', 'policy'] as const) {
    await assert.rejects(
      h.client('organisationSettings', caller).getOrganisationSettings({ organisationId: h.organisationId }),
      (err: Error) => {
        assert.match(err.message, new RegExp(`GetOrganisationSettings is not open to ${caller} `));
        assert.equal((err.cause as { code?: number }).code, GrpcStatus.PERMISSION_DENIED);
        return true;
      },
      caller,
    );
  }
});
