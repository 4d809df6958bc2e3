import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { Topics, publishEvent } from '@switchyard/adapters';
import { events } from '@switchyard/proto';
import { controlPlane } from '@switchyard/control-plane';
import { eventually, startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { logExportService } from '../service.ts';

type AuditInit = MessageInitShape<typeof events.AuditEventSchema>;

let h: ServiceHarness;

before(async () => {
  h = await startServiceHarness({ services: [controlPlane, logExportService] });
});
after(() => h.close());

function auditEvent(overrides: Partial<AuditInit> = {}): AuditInit & { id: string } {
  return {
    id: randomUUID(),
    organisationId: h.organisationId,
    workspaceId: h.workspaceId,
    apiKeyId: randomUUID(),
    authMethod: 'api_key',
    keyName: 'replayed key',
    method: 'DELETE',
    route: '/v2/configs/:slug',
    path: '/v2/configs/replayed',
    scope: 'configs.delete',
    status: 200,
    resourceId: 'replayed',
    occurredAtMs: String(Date.UTC(2026, 2, 14, 12, 30, 15, 250)),
    clientIp: '127.0.0.1',
    userAgent: 'replay/1',
    requestId: randomUUID(),
    service: 'control-plane',
    ...overrides,
  } as AuditInit & { id: string };
}

function publish(event: AuditInit) {
  publishEvent(h.bus, Topics.audit, events.AuditEventSchema, event.organisationId ?? '', event);
}

async function rowsWithId(id: string): Promise<number> {
  const [row] = await h
    .db('log-export')
    .query(`SELECT count(*)::int AS n FROM log_export.audit_logs WHERE id = $1`, [id]);
  return row.n;
}

const storedOnce = (id: string) =>
  eventually(async () => ((await rowsWithId(id)) === 1 ? true : undefined), { what: `audit entry ${id}` });

describe('consuming audit events', () => {
  test('an event seen twice is stored once', async () => {
    const event = auditEvent();
    publish(event);
    publish(event);
    const later = auditEvent();
    publish(later);
    await storedOnce(later.id);
    assert.equal(await rowsWithId(event.id), 1);
    const res = await h.request('GET', `/v1/audit-logs?resource=${encodeURIComponent('/v2/configs/:slug')}`, {
      key: h.adminKey,
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.data.filter((e: { id: string }) => e.id === event.id).length, 1);
    const entry = res.body.data.find((e: { id: string }) => e.id === event.id);
    assert.equal(entry.occurred_at, '2026-03-14T12:30:15.250Z');
    assert.deepEqual(entry.actor, {
      api_key_id: event.apiKeyId,
      key_name: 'replayed key',
      user_id: null,
      auth_method: 'api_key',
    });
  });

  test('undecodable messages and events the database rejects are skipped; later events still arrive', async () => {
    h.bus.publish({ topic: Topics.audit, key: 'junk', value: Uint8Array.from([0xff, 0xff, 0xff, 0xff]) });
    publish(auditEvent({ organisationId: 'not-a-uuid' }));
    const later = auditEvent({ keyName: 'a\u0000b' });
    publish(later);
    await storedOnce(later.id);
  });
});
