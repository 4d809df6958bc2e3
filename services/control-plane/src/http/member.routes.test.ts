import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fromBinary } from '@bufbuild/protobuf';
import { sha256Hex } from '@switchyard/core';
import { Topics } from '@switchyard/adapters';
import { events } from '@switchyard/proto';
import { startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { controlPlane } from '../service.ts';
import { seedOrganisation, type SeededOrganisation } from '../testing/organisations.ts';
import { createWorkspace } from '../testing/workspaces.ts';

let h: ServiceHarness;
let rival: SeededOrganisation;

before(async () => {
  h = await startServiceHarness({ services: [controlPlane] });
  rival = await seedOrganisation(h.db('control-plane').manager, 'members-rival');
});
after(() => h.close());

const UNKNOWN = '00000000-0000-4000-8000-000000000000';
let emails = 0;
const newEmail = (name = 'person') => `${name}.${++emails}@example.com`;

async function addUser(json: Record<string, unknown>, key = h.adminKey) {
  const res = await h.request('POST', '/v1/admin/users', { key, json: { role: 'member', ...json } });
  assert.equal(res.status, 200, res.text);
  return res.body as { id: string; email: string; role: string; workspace_ids: string[] };
}

async function join(workspaceId: string, userId: string, role = 'member') {
  const res = await h.request('POST', `/v1/admin/workspaces/${workspaceId}/users`, {
    key: h.adminKey,
    json: { users: [{ id: userId, role }] },
  });
  assert.equal(res.status, 200, res.text);
}

async function createUserKey(workspaceId: string, userId: string) {
  const res = await h.request('POST', '/v2/api-keys/workspace/user', {
    key: h.adminKey,
    json: { name: 'Personal key', workspace_id: workspaceId, user_id: userId },
  });
  assert.equal(res.status, 200, res.text);
  return res.body as { id: string; key: string; user_id: string };
}

const works = async (key: string) => (await h.request('GET', '/v2/workspaces', { key })).status;

function changesSince(before: number, entity: string) {
  return h.bus
    .log(Topics.changes)
    .slice(before)
    .map((message) => fromBinary(events.ChangeEventSchema, message.value))
    .filter((change) => change.entity === entity);
}

describe('organisation users', () => {
  test('an organisation admin adds a user and reads it back; the role is taken in any case', async () => {
    const email = newEmail('Ada.Lovelace');
    const before = h.bus.log(Topics.changes).length;
    const res = await h.request('POST', '/v1/admin/users', {
      key: h.adminKey,
      json: { email, first_name: 'Ada', last_name: 'Lovelace', role: 'Admin' },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.object, 'user');
    assert.equal(res.body.email, email);
    assert.equal(res.body.first_name, 'Ada');
    assert.equal(res.body.last_name, 'Lovelace');
    assert.equal(res.body.role, 'admin');
    assert.deepEqual(res.body.workspace_ids, []);
    assert.ok(Date.parse(res.body.created_at) > 0 && Date.parse(res.body.last_updated_at) > 0);

    const shown = await h.request('GET', `/v1/admin/users/${res.body.id}`, { key: h.adminKey });
    assert.equal(shown.status, 200);
    assert.deepEqual(shown.body, res.body);
    const viaV2 = await h.request('GET', `/v2/admin/users/${res.body.id}`, { key: h.adminKey });
    assert.deepEqual(viaV2.body, res.body);

    const changes = changesSince(before, 'user');
    assert.equal(changes.length, 1);
    assert.equal(changes[0]!.action, events.ChangeAction.CREATED);
    assert.equal(changes[0]!.entityId, res.body.id);
    assert.equal(changes[0]!.organisationId, h.organisationId);
  });

  test('an email known in any case is the same user; adding a member again is a 409', async () => {
    const email = newEmail('shared');
    const first = await addUser({ email, first_name: 'Grace' }, rival.adminKey);
    const second = await addUser({ email: email.toUpperCase(), first_name: 'Other' });
    assert.equal(second.id, first.id);
    assert.equal(second.email, email);

    const again = await h.request('POST', '/v1/admin/users', {
      key: h.adminKey,
      json: { email: ` ${email} `, role: 'admin' },
    });
    assert.equal(again.status, 409);
    assert.equal(again.body.error.type, 'conflict_error');
    const shown = await h.request('GET', `/v1/admin/users/${first.id}`, { key: h.adminKey });
    assert.equal(shown.body.role, 'member');
  });

  test('lists page by page, filtered by email in any case and by role', async () => {
    const added = [];
    for (let n = 0; n < 3; n++) added.push(await addUser({ email: newEmail('listed') }));
    const all = await h.request('GET', '/v1/admin/users?page_size=1000', { key: h.adminKey });
    assert.equal(all.status, 200);
    assert.equal(all.body.object, 'list');
    assert.equal(all.body.total, all.body.data.length);
    const ids = all.body.data.map((user: { id: string }) => user.id);
    for (const user of added) assert.ok(ids.includes(user.id));

    const paged = await h.request('GET', `/v1/admin/users?page_size=1&current_page=${all.body.total - 1}`, {
      key: h.adminKey,
    });
    assert.equal(paged.body.total, all.body.total);
    assert.deepEqual(
      paged.body.data.map((user: { id: string }) => user.id),
      [ids.at(-1)],
    );

    const byEmail = await h.request('GET', `/v1/admin/users?email=${added[1]!.email.toUpperCase()}`, {
      key: h.adminKey,
    });
    assert.equal(byEmail.body.total, 1);
    assert.equal(byEmail.body.data[0].id, added[1]!.id);

    const admins = await h.request('GET', '/v1/admin/users?role=ADMIN&page_size=1000', { key: h.adminKey });
    assert.ok(admins.body.total >= 1);
    for (const user of admins.body.data) assert.equal(user.role, 'admin');
  });

  test('bad input is a 400 naming the field, and adds nobody', async () => {
    const email = newEmail('invalid');
    for (const [json, param] of [
      [{ email, role: 'superuser' }, 'role'],
      [{ email, role: 7 }, 'role'],
      [{ email }, 'role'],
      [{ role: 'member' }, 'email'],
      [{ email: 'not-an-email', role: 'member' }, 'email'],
      [{ email, role: 'member', first_name: '' }, 'first_name'],
      [{ email, role: 'member', workspaces: [] }, 'workspaces'],
    ] as const) {
      const res = await h.request('POST', '/v1/admin/users', { key: h.adminKey, json });
      assert.equal(res.status, 400, JSON.stringify(json));
      assert.equal(res.body.error.param, param, JSON.stringify(json));
    }
    const listed = await h.request('GET', `/v1/admin/users?email=${email}`, { key: h.adminKey });
    assert.equal(listed.body.total, 0);

    for (const [path, param] of [
      ['/v1/admin/users?role=root', 'role'],
      ['/v1/admin/users?email=nobody', 'email'],
      ['/v1/admin/users?page_size=0', 'page_size'],
    ] as const) {
      const res = await h.request('GET', path, { key: h.adminKey });
      assert.equal(res.status, 400, path);
      assert.equal(res.body.error.param, param, path);
    }
    const user = await addUser({ email: newEmail('picky') });
    for (const [json, param] of [
      [{ role: 'boss' }, 'role'],
      [{}, 'role'],
      [{ role: 'admin', email: 'x@example.com' }, 'email'],
    ] as const) {
      const res = await h.request('PUT', `/v1/admin/users/${user.id}`, { key: h.adminKey, json });
      assert.equal(res.status, 400, JSON.stringify(json));
      assert.equal(res.body.error.param, param, JSON.stringify(json));
    }
  });

  test('a workspace key gets 403 on every route, whatever the body', async () => {
    const user = await addUser({ email: newEmail('guarded') });
    for (const [method, path, json] of [
      ['POST', '/v1/admin/users', { email: newEmail(), role: 'owner' }],
      ['POST', '/v1/admin/users', { nonsense: true }],
      ['GET', '/v1/admin/users', undefined],
      ['GET', `/v1/admin/users/${user.id}`, undefined],
      ['PUT', `/v1/admin/users/${user.id}`, { role: 'owner' }],
      ['DELETE', `/v1/admin/users/${user.id}`, undefined],
    ] as const) {
      const res = await h.request(method, path, { key: h.workspaceKey, json });
      assert.equal(res.status, 403, `${method} ${path}`);
      assert.equal(res.body.error.type, 'permission_error');
    }
    assert.equal((await h.request('GET', '/v1/admin/users')).status, 401);
    const shown = await h.request('GET', `/v1/admin/users/${user.id}`, { key: h.adminKey });
    assert.equal(shown.body.role, 'member');
  });

  test("an unknown user, or another organisation's, is a 404 on read, update and removal", async () => {
    const theirs = await addUser({ email: newEmail('theirs') }, rival.adminKey);
    for (const id of [theirs.id, UNKNOWN, 'not-a-uuid']) {
      for (const [method, json] of [
        ['GET', undefined],
        ['PUT', { role: 'admin' }],
        ['DELETE', undefined],
      ] as const) {
        const res = await h.request(method, `/v1/admin/users/${id}`, { key: h.adminKey, json });
        assert.equal(res.status, 404, `${method} ${id}`);
      }
    }
    const still = await h.request('GET', `/v1/admin/users/${theirs.id}`, { key: rival.adminKey });
    assert.equal(still.body.role, 'member');
  });

  test('PUT changes the role, in any case, and announces the change', async () => {
    const user = await addUser({ email: newEmail('promoted') });
    const before = h.bus.log(Topics.changes).length;
    const res = await h.request('PUT', `/v1/admin/users/${user.id}`, {
      key: h.adminKey,
      json: { role: 'ADMIN' },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.role, 'admin');
    assert.equal(
      (await h.request('GET', `/v1/admin/users/${user.id}`, { key: h.adminKey })).body.role,
      'admin',
    );
    const changes = changesSince(before, 'user');
    assert.equal(changes.length, 1);
    assert.equal(changes[0]!.action, events.ChangeAction.UPDATED);
    assert.equal(changes[0]!.entityId, user.id);
  });
});

describe('the last owner', () => {
  test('cannot be demoted or removed; once there is another owner, can', async () => {
    const org = await seedOrganisation(h.db('control-plane').manager, 'owners-inc');
    const put = (id: string, role: string) =>
      h.request('PUT', `/v1/admin/users/${id}`, { key: org.adminKey, json: { role } });
    const owner = await addUser({ email: newEmail('owner'), role: 'owner' }, org.adminKey);

    for (const res of [
      await put(owner.id, 'admin'),
      await put(owner.id, 'member'),
      await h.request('DELETE', `/v1/admin/users/${owner.id}`, { key: org.adminKey }),
    ]) {
      assert.equal(res.status, 409, res.text);
      assert.equal(res.body.error.code, 'last_owner');
    }
    assert.equal((await put(owner.id, 'Owner')).status, 200);

    const second = await addUser({ email: newEmail('second') }, org.adminKey);
    assert.equal((await put(second.id, 'owner')).status, 200);
    assert.equal((await put(owner.id, 'admin')).status, 200);
    const removed = await h.request('DELETE', `/v1/admin/users/${second.id}`, { key: org.adminKey });
    assert.equal(removed.status, 409);
    assert.equal((await put(owner.id, 'owner')).status, 200);
    assert.equal(
      (await h.request('DELETE', `/v1/admin/users/${second.id}`, { key: org.adminKey })).status,
      200,
    );
  });

  test('of two owners demoted at the same time, one stays', async () => {
    const org = await seedOrganisation(h.db('control-plane').manager, 'racing-owners');
    const a = await addUser({ email: newEmail('a'), role: 'owner' }, org.adminKey);
    const b = await addUser({ email: newEmail('b'), role: 'owner' }, org.adminKey);
    const results = await Promise.all(
      [a, b].map((user) =>
        h.request('PUT', `/v1/admin/users/${user.id}`, { key: org.adminKey, json: { role: 'member' } }),
      ),
    );
    assert.deepEqual(results.map((res) => res.status).sort(), [200, 409]);
    const owners = await h.request('GET', '/v1/admin/users?role=owner', { key: org.adminKey });
    assert.equal(owners.body.total, 1);
  });
});

describe('removing a user from the organisation', () => {
  test('removes their memberships and revokes their user keys: the keys then get 401', async () => {
    const first = await createWorkspace(h, 'Removal one');
    const second = await createWorkspace(h, 'Removal two');
    const user = await addUser({ email: newEmail('leaver') });
    await join(first.id, user.id);
    await join(second.id, user.id, 'admin');
    const shown = await h.request('GET', `/v1/admin/users/${user.id}`, { key: h.adminKey });
    assert.deepEqual(shown.body.workspace_ids, [first.id, second.id]);
    const keys = [await createUserKey(first.id, user.id), await createUserKey(second.id, user.id)];
    for (const { key } of keys) assert.equal(await works(key), 200);

    const before = h.bus.log(Topics.changes).length;
    const res = await h.request('DELETE', `/v1/admin/users/${user.id}`, { key: h.adminKey });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, {});

    for (const { key, id } of keys) {
      assert.equal(await works(key), 401);
      assert.equal(
        (await h.request('GET', `/v2/api-keys/${id}`, { key: h.adminKey })).body.status,
        'revoked',
      );
    }
    assert.deepEqual(
      changesSince(before, 'api_key')
        .map((change) => change.cacheKey)
        .sort(),
      keys.map(({ key }) => sha256Hex(key)).sort(),
    );
    const userChanges = changesSince(before, 'user');
    assert.equal(userChanges.length, 1);
    assert.equal(userChanges[0]!.action, events.ChangeAction.DELETED);

    assert.equal((await h.request('GET', `/v1/admin/users/${user.id}`, { key: h.adminKey })).status, 404);
    const members = await h.request('GET', `/v1/admin/workspaces/${first.id}/users`, { key: h.adminKey });
    assert.equal(members.body.total, 0);
    assert.equal(await works(h.workspaceKey), 200);

    // Added back, they start over: no workspaces, and the old keys stay revoked.
    const back = await addUser({ email: user.email });
    assert.equal(back.id, user.id);
    assert.deepEqual(back.workspace_ids, []);
    assert.equal(await works(keys[0]!.key), 401);
  });
});

describe('workspace members', () => {
  test('adds organisation members, one or several, by workspace id or slug, roles in any case', async () => {
    const workspace = await createWorkspace(h, 'Members', 'members-ws');
    const [ada, bob, cy] = [
      await addUser({ email: newEmail('ada'), first_name: 'Ada', role: 'admin' }),
      await addUser({ email: newEmail('bob') }),
      await addUser({ email: newEmail('cy') }),
    ];
    const before = h.bus.log(Topics.changes).length;
    const many = await h.request('POST', `/v1/admin/workspaces/${workspace.id}/users`, {
      key: h.adminKey,
      json: {
        users: [
          { id: ada!.id, role: 'Manager' },
          { id: bob!.id, role: 'member' },
        ],
      },
    });
    assert.equal(many.status, 200, many.text);
    assert.equal(many.body.total, 2);
    const one = await h.request('POST', '/v1/admin/workspaces/members-ws/users', {
      key: h.adminKey,
      json: { id: cy!.id, role: 'ADMIN' },
    });
    assert.equal(one.status, 200, one.text);

    const listed = await h.request('GET', `/v1/admin/workspaces/${workspace.id}/users`, { key: h.adminKey });
    assert.equal(listed.status, 200);
    assert.equal(listed.body.object, 'list');
    assert.equal(listed.body.total, 3);
    const first = listed.body.data.find((member: { id: string }) => member.id === ada!.id);
    assert.equal(first.object, 'workspace-user');
    assert.equal(first.email, ada!.email);
    assert.equal(first.first_name, 'Ada');
    assert.equal(first.org_role, 'admin');
    assert.equal(first.role, 'manager');
    assert.equal(first.workspace_id, workspace.id);
    assert.equal(first.status, 'active');
    assert.deepEqual(listed.body.data.map((member: { role: string }) => member.role).sort(), [
      'admin',
      'manager',
      'member',
    ]);

    const paged = await h.request('GET', '/v2/admin/workspaces/members-ws/users?page_size=2&current_page=1', {
      key: h.adminKey,
    });
    assert.equal(paged.body.total, 3);
    assert.deepEqual(
      paged.body.data.map((member: { id: string }) => member.id),
      [cy!.id],
    );
    const managers = await h.request('GET', `/v1/admin/workspaces/${workspace.id}/users?role=MANAGER`, {
      key: h.adminKey,
    });
    assert.deepEqual(
      managers.body.data.map((member: { id: string }) => member.id),
      [ada!.id],
    );

    const changes = changesSince(before, 'workspace_member');
    assert.equal(changes.length, 3);
    for (const change of changes) {
      assert.equal(change.action, events.ChangeAction.CREATED);
      assert.equal(change.workspaceId, workspace.id);
    }
    assert.deepEqual(
      (await h.request('GET', `/v1/admin/users/${ada!.id}`, { key: h.adminKey })).body.workspace_ids,
      [workspace.id],
    );
  });

  test('a user not in the organisation is a 404 naming it, and nobody is added', async () => {
    const workspace = await createWorkspace(h, 'Strangers');
    const member = await addUser({ email: newEmail('insider') });
    const theirs = await addUser({ email: newEmail('outsider') }, rival.adminKey);
    for (const stranger of [theirs.id, UNKNOWN]) {
      const res = await h.request('POST', `/v1/admin/workspaces/${workspace.id}/users`, {
        key: h.adminKey,
        json: {
          users: [
            { id: member.id, role: 'member' },
            { id: stranger, role: 'member' },
          ],
        },
      });
      assert.equal(res.status, 404, res.text);
      assert.match(res.body.error.message, new RegExp(stranger));
    }
    const listed = await h.request('GET', `/v1/admin/workspaces/${workspace.id}/users`, { key: h.adminKey });
    assert.equal(listed.body.total, 0);
  });

  test('a member added again is a 409, and nobody else is added', async () => {
    const workspace = await createWorkspace(h, 'Twice');
    const [old, fresh] = [await addUser({ email: newEmail() }), await addUser({ email: newEmail() })];
    await join(workspace.id, old!.id);
    const res = await h.request('POST', `/v1/admin/workspaces/${workspace.id}/users`, {
      key: h.adminKey,
      json: {
        users: [
          { id: fresh!.id, role: 'member' },
          { id: old!.id, role: 'admin' },
        ],
      },
    });
    assert.equal(res.status, 409);
    const listed = await h.request('GET', `/v1/admin/workspaces/${workspace.id}/users`, { key: h.adminKey });
    assert.deepEqual(
      listed.body.data.map((member: { id: string; role: string }) => [member.id, member.role]),
      [[old!.id, 'member']],
    );
  });

  test('bad input is a 400 naming the field', async () => {
    const workspace = await createWorkspace(h, 'Member input');
    const user = await addUser({ email: newEmail() });
    const post = (json: unknown) =>
      h.request('POST', `/v1/admin/workspaces/${workspace.id}/users`, { key: h.adminKey, json });
    for (const [json, param] of [
      [{ users: [{ id: user.id, role: 'owner' }] }, 'users[0].role'],
      [{ users: [{ id: user.id }] }, 'users[0].role'],
      [{ users: [{ id: 'nope', role: 'member' }] }, 'users[0].id'],
      [{ users: [{ id: user.id, role: 'member', scopes: [] }] }, 'users[0].scopes'],
      [
        {
          users: [
            { id: user.id, role: 'member' },
            { id: user.id.toUpperCase(), role: 'admin' },
          ],
        },
        'users[1].id',
      ],
      [{ users: [] }, 'users'],
      [{ users: [{ id: user.id, role: 'member' }], id: user.id }, 'users'],
      [{ id: user.id, role: 'boss' }, 'role'],
      [{ id: user.id }, 'role'],
      [{}, 'id'],
      [{ user_id: user.id, role: 'member' }, 'user_id'],
    ] as const) {
      const res = await post(json);
      assert.equal(res.status, 400, JSON.stringify(json));
      assert.equal(res.body.error.param, param, JSON.stringify(json));
    }
    await join(workspace.id, user.id);
    for (const [json, param] of [
      [{ role: 'owner' }, 'role'],
      [{}, 'role'],
      [{ role: 'admin', id: user.id }, 'id'],
    ] as const) {
      const res = await h.request('PUT', `/v1/admin/workspaces/${workspace.id}/users/${user.id}`, {
        key: h.adminKey,
        json,
      });
      assert.equal(res.status, 400, JSON.stringify(json));
      assert.equal(res.body.error.param, param, JSON.stringify(json));
    }
    const res = await h.request('GET', `/v1/admin/workspaces/${workspace.id}/users?role=owner`, {
      key: h.adminKey,
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.param, 'role');
  });

  test("an unknown workspace, or another organisation's, is a 404 on every route", async () => {
    const user = await addUser({ email: newEmail() });
    for (const workspace of [rival.workspaceId, UNKNOWN, 'no-such-workspace']) {
      for (const [method, path, json] of [
        ['POST', '', { users: [{ id: user.id, role: 'member' }] }],
        ['GET', '', undefined],
        ['PUT', `/${user.id}`, { role: 'admin' }],
        ['DELETE', `/${user.id}`, undefined],
      ] as const) {
        const res = await h.request(method, `/v1/admin/workspaces/${workspace}/users${path}`, {
          key: h.adminKey,
          json,
        });
        assert.equal(res.status, 404, `${method} ${workspace}${path}`);
      }
    }
  });

  test('PUT changes a member’s role; a user who is not a member is a 404', async () => {
    const workspace = await createWorkspace(h, 'Roles');
    const [member, outsider] = [await addUser({ email: newEmail() }), await addUser({ email: newEmail() })];
    await join(workspace.id, member!.id);
    const before = h.bus.log(Topics.changes).length;
    const put = (id: string, role: string) =>
      h.request('PUT', `/v1/admin/workspaces/${workspace.id}/users/${id}`, {
        key: h.adminKey,
        json: { role },
      });
    const res = await put(member!.id, 'Manager');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.role, 'manager');
    assert.equal(res.body.id, member!.id);
    const changes = changesSince(before, 'workspace_member');
    assert.equal(changes.length, 1);
    assert.equal(changes[0]!.action, events.ChangeAction.UPDATED);
    for (const id of [outsider!.id, UNKNOWN, 'not-a-uuid'])
      assert.equal((await put(id, 'admin')).status, 404);
  });

  test('DELETE removes the member and revokes their user keys in that workspace only', async () => {
    const here = await createWorkspace(h, 'Leaving here');
    const there = await createWorkspace(h, 'Staying there');
    const user = await addUser({ email: newEmail('mover') });
    await join(here.id, user.id);
    await join(there.id, user.id);
    const [hereKey, thereKey] = [
      await createUserKey(here.id, user.id),
      await createUserKey(there.id, user.id),
    ];

    const before = h.bus.log(Topics.changes).length;
    const res = await h.request('DELETE', `/v1/admin/workspaces/${here.id}/users/${user.id}`, {
      key: h.adminKey,
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, {});
    assert.equal(await works(hereKey!.key), 401);
    assert.equal(await works(thereKey!.key), 200);
    assert.deepEqual(
      changesSince(before, 'api_key').map((change) => change.cacheKey),
      [sha256Hex(hereKey!.key)],
    );
    const memberChanges = changesSince(before, 'workspace_member');
    assert.equal(memberChanges.length, 1);
    assert.equal(memberChanges[0]!.action, events.ChangeAction.DELETED);

    assert.deepEqual(
      (await h.request('GET', `/v1/admin/users/${user.id}`, { key: h.adminKey })).body.workspace_ids,
      [there.id],
    );
    const again = await h.request('DELETE', `/v1/admin/workspaces/${here.id}/users/${user.id}`, {
      key: h.adminKey,
    });
    assert.equal(again.status, 404);
  });

  test('a workspace key gets 403 on every route', async () => {
    const user = await addUser({ email: newEmail() });
    for (const [method, path, json] of [
      ['POST', '', { users: [{ id: user.id, role: 'member' }] }],
      ['POST', '', { nonsense: true }],
      ['GET', '', undefined],
      ['PUT', `/${user.id}`, { role: 'admin' }],
      ['DELETE', `/${user.id}`, undefined],
    ] as const) {
      const res = await h.request(method, `/v1/admin/workspaces/${h.workspaceId}/users${path}`, {
        key: h.workspaceKey,
        json,
      });
      assert.equal(res.status, 403, `${method} ${path}`);
    }
  });
});

describe('workspace-user API keys', () => {
  test('name a member of the workspace: the key then acts for them', async () => {
    const workspace = await createWorkspace(h, 'User keys');
    const user = await addUser({ email: newEmail('keyholder') });
    await join(workspace.id, user.id);
    const created = await createUserKey(workspace.id, user.id);
    assert.equal(created.user_id, user.id);
    assert.equal(await works(created.key), 200);
  });

  test('a user who is not a member of that workspace is a 404 naming user_id', async () => {
    const workspace = await createWorkspace(h, 'No key here');
    const elsewhere = await createWorkspace(h, 'Member there');
    const user = await addUser({ email: newEmail() });
    await join(elsewhere.id, user.id);
    const theirs = await addUser({ email: newEmail() }, rival.adminKey);
    for (const id of [user.id, theirs.id, UNKNOWN]) {
      const res = await h.request('POST', '/v2/api-keys/workspace/user', {
        key: h.adminKey,
        json: { name: 'Not a member', workspace_id: workspace.id, user_id: id },
      });
      assert.equal(res.status, 404, res.text);
      assert.equal(res.body.error.param, 'user_id');
    }
  });

  test("scopes: by default everything the user's role allows; more than the role allows is rejected", async () => {
    const workspace = await createWorkspace(h, 'Scoped user keys');
    const member = await addUser({ email: newEmail('member') });
    const manager = await addUser({ email: newEmail('manager') });
    const orgAdmin = await addUser({ email: newEmail('org-admin'), role: 'admin' });
    await join(workspace.id, member.id, 'member');
    await join(workspace.id, manager.id, 'manager');
    await join(workspace.id, orgAdmin.id, 'member');
    const userKey = (userId: string, scopes?: string[]) =>
      h.request('POST', '/v2/api-keys/workspace/user', {
        key: h.adminKey,
        json: { name: 'Scoped', workspace_id: workspace.id, user_id: userId, ...(scopes ? { scopes } : {}) },
      });
    const before = (
      await h.db('control-plane').query('SELECT count(*)::int AS n FROM control_plane.api_keys')
    )[0].n;

    const byDefault = await userKey(member.id);
    assert.equal(byDefault.status, 200, byDefault.text);
    assert.ok(byDefault.body.scopes.includes('completions.write'));
    assert.ok(byDefault.body.scopes.includes('configs.read'));
    assert.ok(!byDefault.body.scopes.includes('configs.create'), 'a member only reads configs');
    const refused = await h.request('POST', '/v2/configs', {
      key: byDefault.body.key,
      json: { name: 'nope', config: { provider: 'openai' } },
    });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.code, 'missing_scope');

    for (const [userId, scopes, param] of [
      [member.id, ['completions.write', 'configs.create'], 'scopes[1]'],
      [
        manager.id,
        [
          'api_keys.read',
          'logs.view',
          'api_keys.list',
          'configs.delete',
          'guardrails.invoke',
          'api_keys.create',
        ],
        'scopes[5]',
      ],
    ] as const) {
      const res = await userKey(userId, [...scopes]);
      assert.equal(res.status, param === 'scopes[5]' ? 400 : 403, res.text);
      assert.equal(res.body.error.param, param);
    }
    // A manager may hold every workspace scope but key management.
    const managerKey = await userKey(manager.id, ['configs.create', 'configs.delete', 'api_keys.list']);
    assert.equal(managerKey.status, 200, managerKey.text);
    // An organisation admin is a workspace admin in every workspace, whatever their workspace role.
    const adminKey = await userKey(orgAdmin.id, ['configs.create', 'logs.export']);
    assert.equal(adminKey.status, 200, adminKey.text);

    const exceeded = await userKey(member.id, ['logs.export']);
    assert.equal(exceeded.status, 403);
    assert.equal(exceeded.body.error.code, 'scopes_exceed_role');
    const after = (
      await h.db('control-plane').query('SELECT count(*)::int AS n FROM control_plane.api_keys')
    )[0].n;
    assert.equal(after, before + 3, 'refused keys are not stored');

    // Changing a user key's scopes later is held to the same ceiling.
    const raised = await h.request('PUT', `/v2/api-keys/${byDefault.body.id}`, {
      key: h.adminKey,
      json: { scopes: ['completions.write', 'configs.update'] },
    });
    assert.equal(raised.status, 403);
    assert.equal(raised.body.error.code, 'scopes_exceed_role');
    const shown = await h.request('GET', `/v2/api-keys/${byDefault.body.id}`, { key: h.adminKey });
    assert.deepEqual(shown.body.scopes, byDefault.body.scopes);
  });

  test('a user key without user_id, or a service key with one, is a 400 naming user_id', async () => {
    const user = await addUser({ email: newEmail() });
    await join(h.workspaceId, user.id);
    for (const [path, json] of [
      ['/v2/api-keys/workspace/user', { name: 'Nobody', workspace_id: h.workspaceId }],
      ['/v2/api-keys/workspace/service', { name: 'Somebody', workspace_id: h.workspaceId, user_id: user.id }],
      ['/v2/api-keys/organisation/service', { name: 'Somebody', user_id: user.id }],
    ] as const) {
      const res = await h.request('POST', path, { key: h.adminKey, json });
      assert.equal(res.status, 400, path);
      assert.equal(res.body.error.param, 'user_id', path);
    }
  });
});
