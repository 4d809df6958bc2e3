import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fromBinary } from '@bufbuild/protobuf';
import { Topics } from '@switchyard/adapters';
import { events } from '@switchyard/proto';
import { controlPlane } from '@switchyard/control-plane';
import { seedOrganisation } from '@switchyard/control-plane/testing';
import {
  startServiceHarness,
  type HarnessRequest,
  type HarnessResponse,
  type ServiceHarness,
} from '@switchyard/testing';
import { adminService } from '../service.ts';

/** Check-then-act requests sent at once: exactly one wins, the rest are told why, nothing is done twice. */

let h: ServiceHarness;

before(async () => {
  h = await startServiceHarness({ services: [controlPlane, adminService] });
});
after(() => h.close());

/**
 * Sends the same request 20 times at once; each must answer within the test's bound. The
 * embedded database is held in a transaction while they arrive, so their statements queue in
 * arrival order: every request reads before any of them writes, the widest race there is.
 */
async function twentyAtOnce(
  method: string,
  path: string,
  request: HarnessRequest,
): Promise<HarnessResponse[]> {
  const holder = h.db('admin').createQueryRunner();
  await holder.connect();
  await holder.startTransaction();
  const sent = Promise.all(
    Array.from({ length: 20 }, () =>
      h.request(method, path, { ...request, signal: AbortSignal.timeout(30_000) }),
    ),
  );
  await sleep(500);
  await holder.commitTransaction();
  await holder.release();
  return sent;
}

function statuses(responses: HarnessResponse[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const res of responses) counts[res.status] = (counts[res.status] ?? 0) + 1;
  return counts;
}

describe('concurrent writes', { timeout: 120_000 }, () => {
  test('20 first SCIM token issues at once: one 200, nineteen 409, and the issued token works', async () => {
    const organisation = await seedOrganisation(h.db('control-plane').manager, 'scim-race');
    const responses = await twentyAtOnce('POST', '/v1/admin/organisation/scim-token', {
      key: organisation.adminKey,
      json: {},
    });
    assert.deepEqual(statuses(responses), { 200: 1, 409: 19 }, responses.map((r) => r.text).join('\n'));
    for (const refused of responses.filter((r) => r.status === 409)) {
      assert.equal(refused.body.error.code, 'scim_token_exists');
    }
    const token = responses.find((r) => r.status === 200)!.body.token as string;
    const users = await h.request('GET', `/scim/${organisation.organisationId}/Users`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(users.status, 200, users.text);
  });

  test('20 replacing SCIM token issues at once all succeed, and the last stored token is the one that works', async () => {
    const organisation = await seedOrganisation(h.db('control-plane').manager, 'scim-rotate-race');
    const responses = await twentyAtOnce('POST', '/v1/admin/organisation/scim-token', {
      key: organisation.adminKey,
      json: { replace_existing: true },
    });
    assert.deepEqual(statuses(responses), { 200: 20 }, responses.map((r) => r.text).join('\n'));
    const working = [];
    for (const res of responses) {
      const users = await h.request('GET', `/scim/${organisation.organisationId}/Users`, {
        headers: { authorization: `Bearer ${res.body.token}` },
      });
      if (users.status === 200) working.push(res.body.token);
    }
    assert.equal(working.length, 1, 'exactly one token is the organisation token');
  });

  test('20 deletes of one integration at once: one 200, nineteen 404, one change event and one audit entry', async () => {
    const created = await h.request('POST', '/admin/v2/integrations', {
      key: h.adminKey,
      json: { name: 'Raced', slug: 'raced', ai_provider_id: 'openai', key: 'sk-raced-integration-key-0000' },
    });
    assert.equal(created.status, 200, created.text);
    const changesBefore = h.bus.log(Topics.changes).length;
    const auditsBefore = h.bus.log(Topics.audit).length;

    const responses = await twentyAtOnce('DELETE', '/admin/v2/integrations/raced', { key: h.adminKey });
    assert.deepEqual(statuses(responses), { 200: 1, 404: 19 }, responses.map((r) => r.text).join('\n'));

    const changes = h.bus
      .log(Topics.changes)
      .slice(changesBefore)
      .map((message) => fromBinary(events.ChangeEventSchema, message.value))
      .filter((change) => change.entity === 'integration' && change.entityId === created.body.id);
    assert.equal(changes.length, 1);
    assert.equal(changes[0]!.action, events.ChangeAction.DELETED);
    const audits = h.bus
      .log(Topics.audit)
      .slice(auditsBefore)
      .map((message) => fromBinary(events.AuditEventSchema, message.value))
      .filter((entry) => entry.method === 'DELETE' && entry.path === '/admin/v2/integrations/raced');
    assert.equal(audits.length, 1);
    assert.equal(audits[0]!.status, 200);
  });

  test('20 revocations of one API key at once all answer 200, and it is announced revoked once', async () => {
    const organisation = await seedOrganisation(h.db('control-plane').manager, 'revoke-race');
    const keys = await h.request('GET', '/v2/api-keys?page_size=100', { key: organisation.adminKey });
    const workspaceKey = keys.body.data.find((k: { workspace_id: string | null }) => k.workspace_id !== null);
    const changesBefore = h.bus.log(Topics.changes).length;

    const responses = await twentyAtOnce('DELETE', `/v2/api-keys/${workspaceKey.id}`, {
      key: organisation.adminKey,
    });
    assert.deepEqual(statuses(responses), { 200: 20 }, responses.map((r) => r.text).join('\n'));
    const announced = h.bus
      .log(Topics.changes)
      .slice(changesBefore)
      .map((message) => fromBinary(events.ChangeEventSchema, message.value))
      .filter((change) => change.entity === 'api_key' && change.entityId === workspaceKey.id);
    assert.equal(announced.length, 1);
  });

  test('20 deletes of one SCIM user at once: one 200, nineteen 404', async () => {
    const organisation = await seedOrganisation(h.db('control-plane').manager, 'scim-user-race');
    const issued = await h.request('POST', '/v1/admin/organisation/scim-token', {
      key: organisation.adminKey,
      json: {},
    });
    const scimToken = issued.body.token as string;
    const created = await h.request('POST', `/scim/${organisation.organisationId}/Users`, {
      headers: { authorization: `Bearer ${scimToken}` },
      json: {
        schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
        userName: 'raced@example.com',
        emails: [{ value: 'raced@example.com', primary: true }],
        active: true,
      },
    });
    assert.equal(created.status, 201, created.text);

    const responses = await twentyAtOnce(
      'DELETE',
      `/scim/${organisation.organisationId}/Users/${created.body.id}`,
      {
        headers: { authorization: `Bearer ${scimToken}` },
      },
    );
    assert.deepEqual(statuses(responses), { 200: 1, 404: 19 }, responses.map((r) => r.text).join('\n'));
  });
});
