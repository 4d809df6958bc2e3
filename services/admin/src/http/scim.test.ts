import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sha256Hex } from '@switchyard/core';
import { controlPlane } from '@switchyard/control-plane';
import { seedOrganisation, type SeededOrganisation } from '@switchyard/control-plane/testing';
import { startServiceHarness, type HarnessResponse, type ServiceHarness } from '@switchyard/testing';
import { adminService } from '../service.ts';

const TOKEN_ROUTE = '/v1/admin/organisation/scim-token';
const SCIM_ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';

let h: ServiceHarness;
let rival: SeededOrganisation;
let token: string;
let rivalToken: string;

before(async () => {
  h = await startServiceHarness({ services: [controlPlane, adminService] });
  rival = await seedOrganisation(h.db('control-plane').manager, 'scim-rival');
  const issued = await h.request('POST', TOKEN_ROUTE, { key: h.adminKey, json: {} });
  assert.equal(issued.status, 200, issued.text);
  token = issued.body.token;
  const rivalIssued = await h.request('POST', TOKEN_ROUTE, { key: rival.adminKey, json: {} });
  assert.equal(rivalIssued.status, 200, rivalIssued.text);
  rivalToken = rivalIssued.body.token;
});
after(() => h.close());

const scimPath = (path: string, organisationId = h.organisationId) => `/scim/${organisationId}${path}`;

function scim(method: string, path: string, json?: unknown, options: { token?: string; org?: string } = {}) {
  return h.request(method, scimPath(path, options.org), {
    headers: { authorization: `Bearer ${options.token ?? token}` },
    ...(json === undefined ? {} : { json }),
  });
}

function assertScimError(res: HarnessResponse, status: number, detail?: RegExp) {
  assert.equal(res.status, status, res.text);
  assert.deepEqual(res.body.schemas, [SCIM_ERROR], res.text);
  assert.equal(res.body.status, String(status));
  if (detail) assert.match(res.body.detail, detail);
}

const userBody = (email: string, extra: Record<string, unknown> = {}) => ({
  schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
  userName: email,
  name: { givenName: 'Ada', familyName: 'Lovelace' },
  emails: [{ value: email, primary: true, type: 'work' }],
  active: true,
  ...extra,
});

async function createUser(email: string): Promise<string> {
  const res = await scim('POST', '/Users', userBody(email));
  assert.equal(res.status, 201, res.text);
  return res.body.id;
}

async function workspaceMembers(workspaceId = h.workspaceId): Promise<Map<string, string>> {
  const res = await h.request('GET', `/v1/admin/workspaces/${workspaceId}/users?page_size=1000`, {
    key: h.adminKey,
  });
  assert.equal(res.status, 200, res.text);
  return new Map(res.body.data.map((m: { id: string; role: string }) => [m.id, m.role]));
}

describe('the SCIM token', () => {
  test('is shown once when issued, masked afterwards, and encrypted in the database', async () => {
    assert.match(token, /^scim_/);
    const shown = await h.request('GET', TOKEN_ROUTE, { key: h.adminKey });
    assert.equal(shown.status, 200, shown.text);
    assert.equal(shown.body.masked_token, `****${token.slice(-4)}`);
    assert.equal(shown.body.token, undefined);
    assert.equal(shown.body.scim_base_path, `/scim/${h.organisationId}`);
    assert.ok(!shown.text.includes(token.slice(5, -4)), shown.text);
    const [row] = (await h
      .db('admin')
      .query(`SELECT token_hash, encrypted_token FROM admin.scim_credentials WHERE organisation_id = $1`, [
        h.organisationId,
      ])) as Array<{ token_hash: string; encrypted_token: string }>;
    assert.ok(row);
    assert.equal(row.token_hash, sha256Hex(token));
    assert.match(row.encrypted_token, /^v1\./);
    assert.ok(!row.encrypted_token.includes(token));
  });

  test('is replaced only when asked; the old one stops working at once', async () => {
    const again = await h.request('POST', TOKEN_ROUTE, { key: h.adminKey, json: {} });
    assert.equal(again.status, 409, again.text);
    assert.equal(again.body.error.param, 'replace_existing');
    const bad = await h.request('POST', TOKEN_ROUTE, { key: h.adminKey, json: { replace_existing: 'yes' } });
    assert.equal(bad.status, 400, bad.text);
    assert.equal(bad.body.error.param, 'replace_existing');
    const rotated = await h.request('POST', TOKEN_ROUTE, {
      key: h.adminKey,
      json: { replace_existing: true },
    });
    assert.equal(rotated.status, 200, rotated.text);
    assertScimError(await scim('GET', '/Users'), 401);
    token = rotated.body.token;
    assert.equal((await scim('GET', '/Users')).status, 200);
  });

  test('a deleted token authenticates nothing', async () => {
    const other = await seedOrganisation(h.db('control-plane').manager, 'scim-deleted');
    const issued = await h.request('POST', TOKEN_ROUTE, { key: other.adminKey, json: {} });
    const removed = await h.request('DELETE', TOKEN_ROUTE, { key: other.adminKey });
    assert.equal(removed.status, 200, removed.text);
    assertScimError(
      await scim('GET', '/Users', undefined, { token: issued.body.token, org: other.organisationId }),
      401,
    );
    assert.equal((await h.request('GET', TOKEN_ROUTE, { key: other.adminKey })).status, 404);
  });
});

describe('SCIM authentication', () => {
  test('takes the token as a bearer token or as the Basic password', async () => {
    assert.equal((await scim('GET', '/Users')).status, 200);
    const basic = await h.request('GET', scimPath('/Users'), {
      headers: { authorization: `Basic ${Buffer.from(`scim:${token}`).toString('base64')}` },
    });
    assert.equal(basic.status, 200, basic.text);
    assert.deepEqual(basic.body.schemas, ['urn:ietf:params:scim:api:messages:2.0:ListResponse']);
  });

  test('refuses no token, a wrong one, an API key and another organisation token with a SCIM 401', async () => {
    const none = await h.request('GET', scimPath('/Users'));
    assertScimError(none, 401);
    assert.match(none.headers.get('www-authenticate') ?? '', /Bearer/);
    assertScimError(await scim('GET', '/Users', undefined, { token: 'scim_wrong' }), 401);
    assertScimError(await scim('GET', '/Users', undefined, { token: h.adminKey }), 401);
    assertScimError(await scim('GET', '/Users', undefined, { token: rivalToken }), 401);
    assertScimError(
      await scim('POST', '/Users', userBody('intruder@example.com'), { token: rivalToken }),
      401,
    );
    assertScimError(await scim('GET', '/Users', undefined, { org: 'not-a-uuid' }), 401);
  });

  test("one organisation's token never shows or changes another's users", async () => {
    const id = await createUser('tenant.one@example.com');
    const rivalView = await scim('GET', `/Users/${id}`, undefined, {
      token: rivalToken,
      org: rival.organisationId,
    });
    assertScimError(rivalView, 404);
    const rivalPatch = await scim(
      'PATCH',
      `/Users/${id}`,
      { Operations: [{ op: 'replace', path: 'active', value: false }] },
      { token: rivalToken, org: rival.organisationId },
    );
    assertScimError(rivalPatch, 404);
    const list = await scim('GET', '/Users', undefined, { token: rivalToken, org: rival.organisationId });
    assert.equal(list.body.totalResults, 0);
    assert.equal((await scim('GET', `/Users/${id}`)).body.active, true);
  });
});

describe('SCIM users', () => {
  test('created as organisation users, listed with filter and paging', async () => {
    const created = await scim(
      'POST',
      '/Users',
      userBody('Grace.Hopper@example.com', { externalId: 'ext-1' }),
    );
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.userName, 'Grace.Hopper@example.com');
    assert.equal(created.body.active, true);
    assert.equal(created.body.externalId, 'ext-1');
    assert.deepEqual(created.body.meta.resourceType, 'User');
    const orgUser = await h.request('GET', `/v1/admin/users/${created.body.id}`, { key: h.adminKey });
    assert.equal(orgUser.status, 200, orgUser.text);
    assert.equal(orgUser.body.email, 'Grace.Hopper@example.com');
    assert.equal(orgUser.body.role, 'member');

    const filtered = await scim(
      'GET',
      `/Users?filter=${encodeURIComponent('userName eq "grace.hopper@example.com"')}`,
    );
    assert.equal(filtered.status, 200, filtered.text);
    assert.equal(filtered.body.totalResults, 1);
    assert.equal(filtered.body.Resources[0].id, created.body.id);
    const none = await scim('GET', `/Users?filter=${encodeURIComponent('userName eq "nobody@example.com"')}`);
    assert.equal(none.body.totalResults, 0);
    assert.deepEqual(none.body.Resources, []);

    await createUser('paging.one@example.com');
    const all = await scim('GET', '/Users');
    const page = await scim('GET', '/Users?startIndex=2&count=1');
    assert.equal(page.body.startIndex, 2);
    assert.equal(page.body.itemsPerPage, 1);
    assert.equal(page.body.totalResults, all.body.totalResults);
    assert.equal(page.body.Resources[0].id, all.body.Resources[1].id);
  });

  test('the same userName twice is a 409 uniqueness error', async () => {
    await createUser('twice@example.com');
    const again = await scim('POST', '/Users', userBody('twice@example.com'));
    assertScimError(again, 409);
    assert.equal(again.body.scimType, 'uniqueness');
  });

  test('bad input is a SCIM 400 naming the attribute', async () => {
    assertScimError(await scim('POST', '/Users', { emails: [] }), 400, /userName/);
    assertScimError(
      await scim('POST', '/Users', userBody('x@example.com', { active: 'maybe' })),
      400,
      /active/,
    );
    assertScimError(await scim('POST', '/Users', { userName: 'not an email' }), 400, /emails/);
    assertScimError(await scim('GET', `/Users?filter=${encodeURIComponent('title co "x"')}`), 400, /filter/);
    const id = await createUser('patch.bad@example.com');
    assertScimError(await scim('PATCH', `/Users/${id}`, { Operations: [] }), 400, /Operations/);
    assertScimError(
      await scim('PATCH', `/Users/${id}`, {
        Operations: [{ op: 'replace', path: 'active', value: 'sometimes' }],
      }),
      400,
      /active/,
    );
  });

  test('deactivated (PATCH active=false) they leave the organisation and its workspaces; reactivated they return', async () => {
    const id = await createUser('leaver@example.com');
    const joined = await h.request('POST', `/v1/admin/workspaces/${h.workspaceId}/users`, {
      key: h.adminKey,
      json: { users: [{ id, role: 'member' }] },
    });
    assert.equal(joined.status, 200, joined.text);
    const off = await scim('PATCH', `/Users/${id}`, {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
      Operations: [{ op: 'Replace', path: 'active', value: 'False' }],
    });
    assert.equal(off.status, 200, off.text);
    assert.equal(off.body.active, false);
    assert.equal((await h.request('GET', `/v1/admin/users/${id}`, { key: h.adminKey })).status, 404);
    assert.ok(!(await workspaceMembers()).has(id));
    const on = await scim('PATCH', `/Users/${id}`, {
      Operations: [{ op: 'replace', value: { active: true } }],
    });
    assert.equal(on.body.active, true);
    assert.equal((await h.request('GET', `/v1/admin/users/${id}`, { key: h.adminKey })).status, 200);
  });

  test('replaced with PUT; the email cannot change', async () => {
    const id = await createUser('put.user@example.com');
    const put = await scim(
      'PUT',
      `/Users/${id}`,
      userBody('put.user@example.com', { displayName: 'Put User' }),
    );
    assert.equal(put.status, 200, put.text);
    assert.equal(put.body.displayName, 'Put User');
    const moved = await scim('PUT', `/Users/${id}`, userBody('elsewhere@example.com'));
    assertScimError(moved, 400, /email/);
  });

  test('deleted: gone from SCIM and from the organisation', async () => {
    const id = await createUser('deleted.user@example.com');
    const removed = await scim('DELETE', `/Users/${id}`);
    assert.equal(removed.status, 200, removed.text);
    assertScimError(await scim('GET', `/Users/${id}`), 404);
    assert.equal((await h.request('GET', `/v1/admin/users/${id}`, { key: h.adminKey })).status, 404);
  });
});

describe('SCIM groups mapped to workspaces', () => {
  test('members of a mapped group are workspace members with the mapping role, and leave with the group or the mapping', async () => {
    const alice = await createUser('alice.group@example.com');
    const bob = await createUser('bob.group@example.com');
    const group = await scim('POST', '/Groups', {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'],
      displayName: 'Engineers',
      members: [{ value: alice }],
    });
    assert.equal(group.status, 201, group.text);
    assert.deepEqual(
      group.body.members.map((m: { value: string }) => m.value),
      [alice],
    );

    const mapped = await h.request('POST', '/v1/scim/workspaces', {
      key: h.adminKey,
      json: { workspace_id: h.workspaceId, role: 'Manager', scim_group_name: 'engineers' },
    });
    assert.equal(mapped.status, 200, mapped.text);
    assert.equal(mapped.body.role, 'manager');
    assert.equal(mapped.body.scim_group_id, group.body.id);
    assert.equal((await workspaceMembers()).get(alice), 'manager');

    const added = await scim('PATCH', `/Groups/${group.body.id}`, {
      Operations: [{ op: 'add', path: 'members', value: [{ value: bob }] }],
    });
    assert.equal(added.status, 200, added.text);
    assert.equal((await workspaceMembers()).get(bob), 'manager');

    const removed = await scim('PATCH', `/Groups/${group.body.id}`, {
      Operations: [{ op: 'remove', path: `members[value eq "${alice}"]` }],
    });
    assert.equal(removed.status, 200, removed.text);
    assert.ok(!(await workspaceMembers()).has(alice));

    const listed = await h.request('GET', '/v1/scim/workspaces?page=0&page_size=10', { key: h.adminKey });
    assert.equal(listed.status, 200, listed.text);
    assert.equal(listed.body.page, 0);
    assert.equal(listed.body.page_size, 10);
    assert.equal(listed.body.total_count, 1);
    assert.equal(listed.body.data[0].id, mapped.body.id);

    const unmapped = await h.request('DELETE', `/v1/scim/workspaces/${mapped.body.id}`, { key: h.adminKey });
    assert.equal(unmapped.status, 200, unmapped.text);
    assert.deepEqual(unmapped.body, { success: true });
    assert.ok(!(await workspaceMembers()).has(bob));
    assert.equal(
      (await h.request('DELETE', `/v1/scim/workspaces/${mapped.body.id}`, { key: h.adminKey })).status,
      404,
    );
  });

  test('every mapping of a group gives one role: another role is refused naming role', async () => {
    const group = await scim('POST', '/Groups', { displayName: 'Analysts' });
    assert.equal(group.status, 201, group.text);
    const other = await h.request('POST', '/v2/workspaces', { key: h.adminKey, json: { name: 'Analysis' } });
    assert.equal(other.status, 200, other.text);
    const first = await h.request('POST', '/v1/scim/workspaces', {
      key: h.adminKey,
      json: { workspace_id: h.workspaceId, role: 'member', scim_group_id: group.body.id },
    });
    assert.equal(first.status, 200, first.text);
    const conflicting = await h.request('POST', '/v1/scim/workspaces', {
      key: h.adminKey,
      json: { workspace_id: other.body.id, role: 'ADMIN', scim_group_id: group.body.id },
    });
    assert.equal(conflicting.status, 409, conflicting.text);
    assert.equal(conflicting.body.error.param, 'role');
    assert.match(conflicting.body.error.message, /role/);
    const same = await h.request('POST', '/v1/scim/workspaces', {
      key: h.adminKey,
      json: { workspace_id: other.body.id, role: 'Member', scim_group_id: group.body.id },
    });
    assert.equal(same.status, 200, same.text);
  });

  test('a mapping needs exactly one of scim_group_id or scim_group_name, a known role and a workspace of the organisation', async () => {
    const group = await scim('POST', '/Groups', { displayName: 'Exactly one' });
    const post = (json: unknown, key = h.adminKey) => h.request('POST', '/v1/scim/workspaces', { key, json });
    const both = await post({
      workspace_id: h.workspaceId,
      role: 'member',
      scim_group_id: group.body.id,
      scim_group_name: 'Exactly one',
    });
    assert.equal(both.status, 400, both.text);
    assert.match(both.body.error.message, /exactly one of scim_group_id or scim_group_name/);
    const neither = await post({ workspace_id: h.workspaceId, role: 'member' });
    assert.equal(neither.status, 400, neither.text);
    assert.equal(neither.body.error.param, 'scim_group_id');
    const badRole = await post({ workspace_id: h.workspaceId, role: 'owner', scim_group_id: group.body.id });
    assert.equal(badRole.status, 400, badRole.text);
    assert.equal(badRole.body.error.param, 'role');
    const foreign = await post({
      workspace_id: rival.workspaceId,
      role: 'member',
      scim_group_id: group.body.id,
    });
    assert.equal(foreign.status, 404, foreign.text);
    assert.equal(foreign.body.error.param, 'workspace_id');
    const strangerGroup = await post(
      { workspace_id: rival.workspaceId, role: 'member', scim_group_id: group.body.id },
      rival.adminKey,
    );
    assert.equal(strangerGroup.status, 404, strangerGroup.text);
  });

  test('groups are listed for administrators with search and paging', async () => {
    await scim('POST', '/Groups', { displayName: 'Searchable Team' });
    const found = await h.request('GET', '/v1/scim/groups?search=searchable&page_size=5', {
      key: h.adminKey,
    });
    assert.equal(found.status, 200, found.text);
    assert.equal(found.body.total_count, 1);
    assert.equal(found.body.data[0].display_name, 'Searchable Team');
    const bad = await h.request('GET', '/v1/scim/groups?page_size=0', { key: h.adminKey });
    assert.equal(bad.status, 400, bad.text);
    assert.equal(bad.body.error.param, 'page_size');
    const filtered = await scim(
      'GET',
      `/Groups?filter=${encodeURIComponent('displayName eq "searchable team"')}`,
    );
    assert.equal(filtered.body.totalResults, 1);
  });

  test('a member that is not a user of the organisation is refused', async () => {
    const res = await scim('POST', '/Groups', {
      displayName: 'Strangers',
      members: [{ value: rival.workspaceId }],
    });
    assertScimError(res, 400, /members/);
  });

  test('a name the database cannot store (a NUL byte) is a SCIM 400, and no group is created', async () => {
    const res = await scim('POST', '/Groups', { displayName: 'Null\u0000Group', members: [] });
    assertScimError(res, 400);
    const all = await scim('GET', '/Groups?count=1000');
    assert.ok(
      !all.body.Resources.some((g: { displayName: string }) => g.displayName.startsWith('Null')),
      all.text,
    );
  });
});
