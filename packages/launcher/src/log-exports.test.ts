import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Admin } from '@switchyard/admin';
import { eventually, startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { allServices } from './services.ts';

/**
 * Log exports in the assembled services: a request through the gateway is logged, an export
 * of it is refused a field the organisation denies (read from admin over gRPC), then made,
 * run by log-export's runner, downloaded through its signed link, and deleted.
 */

let h: ServiceHarness;
let requestId: string;

before(async () => {
  h = await startServiceHarness({ services: allServices });
  await h.instance<Admin>('admin').ensureMockIntegration(h.organisationId);
  const completion = await h.request('POST', '/v1/chat/completions', {
    key: h.workspaceKey,
    json: { model: '@mock/mock-1', messages: [{ role: 'user', content: 'export me' }] },
  });
  assert.equal(completion.status, 200, completion.text);
  requestId = completion.headers.get('x-request-id')!;
  await eventually(
    async () => {
      const found = await h.request('GET', `/v1/logs/${requestId}`, { key: h.workspaceKey });
      return found.status === 200 ? true : undefined;
    },
    { what: 'the request log' },
  );
});
after(() => h?.close());

test("an export refuses the organisation's denied fields, runs, downloads through its signed link, and is deleted", async () => {
  const deny = await h.request('PUT', '/v1/admin/organisation/settings', {
    key: h.adminKey,
    json: { export_settings: { deniedFields: ['request'] } },
  });
  assert.equal(deny.status, 200, deny.text);
  const refused = await h.request('POST', '/v1/logs/exports', {
    key: h.workspaceKey,
    json: { filters: {}, requested_data: ['id', 'request'] },
  });
  assert.equal(refused.status, 422, refused.text);
  assert.equal(refused.body.error.code, 'export_field_denied');
  const restrictions = await h.request('GET', '/v1/logs/exports/field-restrictions', { key: h.workspaceKey });
  assert.deepEqual(restrictions.body.denied_fields, ['request']);

  const made = await h.request('POST', '/v1/logs/exports', {
    key: h.workspaceKey,
    json: { filters: {}, requested_data: ['id', 'ai_model', 'response_status_code'] },
  });
  assert.equal(made.status, 200, made.text);
  assert.equal(made.body.total, 1);
  const id = made.body.id as string;
  const started = await h.request('POST', `/v1/logs/exports/${id}/start`, { key: h.workspaceKey });
  assert.deepEqual(started.body, { message: 'Export started', object: 'export' });
  const done = await eventually(
    async () => {
      const found = await h.request('GET', `/v1/logs/exports/${id}`, { key: h.workspaceKey });
      return found.body.status === 'success' ? found.body : undefined;
    },
    { what: 'the export to finish' },
  );
  assert.deepEqual(done.progress, { exported: 1, total: 1, percent: 100 });

  const link = await h.request('GET', `/v1/logs/exports/${id}/download`, { key: h.workspaceKey });
  assert.equal(link.status, 200, link.text);
  const url = new URL(link.body.signed_url as string);
  const file = await h.request('GET', `${url.pathname}${url.search}`, {});
  assert.equal(file.status, 200, file.text);
  assert.deepEqual(JSON.parse(file.text.trim()), {
    id: requestId,
    ai_model: 'mock-1',
    response_status_code: 200,
  });

  assert.deepEqual((await h.request('DELETE', `/v1/logs/exports/${id}`, { key: h.workspaceKey })).body, {});
  assert.equal((await h.request('GET', `/v1/logs/exports/${id}`, { key: h.workspaceKey })).status, 404);
  assert.equal((await h.request('GET', `${url.pathname}${url.search}`, {})).status, 404);
});
