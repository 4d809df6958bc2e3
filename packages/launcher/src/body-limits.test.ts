import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { adminService } from '@switchyard/admin';
import { controlPlane } from '@switchyard/control-plane';
import { startServiceHarness, type ServiceHarness } from '@switchyard/testing';

/** A JSON body of about two kilobytes. */
const overOneKb = { name: 'x'.repeat(2_000) };

describe('each family of routes takes bodies up to its own MAX_*_REQUEST_BODY', () => {
  let h: ServiceHarness;
  before(async () => {
    h = await startServiceHarness({
      services: [controlPlane, adminService],
      env: {
        MAX_MANAGEMENT_REQUEST_BODY: '1kb',
        MAX_OAUTH_REQUEST_BODY: '1kb',
        MAX_SCIM_REQUEST_BODY: '1kb',
      },
    });
  });
  after(() => h.close());

  for (const [family, method, path] of [
    ['management (control-plane)', 'POST', '/v2/workspaces'],
    ['management (admin)', 'PUT', '/v1/admin/organisation/settings'],
  ] as const) {
    test(`${family}: a body over the limit is a 413 payload_too_large in the error shape`, async () => {
      const res = await h.request(method, path, { key: h.adminKey, json: overOneKb });
      assert.equal(res.status, 413);
      assert.deepEqual(res.body, {
        error: {
          message: 'Request body is too large.',
          type: 'invalid_request_error',
          param: null,
          code: 'payload_too_large',
        },
      });
    });
  }

  test('OAuth: a registration over the limit is a 413', async () => {
    const res = await h.request('POST', '/oauth/register', { json: overOneKb });
    assert.equal(res.status, 413);
  });

  test('SCIM: a provisioning request over the limit is a 413', async () => {
    const issued = await h.request('POST', '/v1/admin/organisation/scim-token', {
      key: h.adminKey,
      json: {},
    });
    assert.equal(issued.status, 200);
    const res = await h.request('POST', `/scim/${h.organisationId}/Users`, {
      headers: { authorization: `Bearer ${String(issued.body.token)}` },
      json: overOneKb,
    });
    assert.equal(res.status, 413);
  });

  test('a body within the limit is read and answered on its merits', async () => {
    const res = await h.request('POST', '/v2/workspaces', { key: h.adminKey, json: { name: 'Small' } });
    assert.notEqual(res.status, 413);
  });
});
