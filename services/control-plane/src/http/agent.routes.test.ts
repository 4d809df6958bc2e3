import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { fromBinary } from '@bufbuild/protobuf';
import { Topics } from '@switchyard/adapters';
import { events } from '@switchyard/proto';
import { startServiceHarness, listenOnLoopback, type ServiceHarness } from '@switchyard/testing';
import { controlPlane } from '../service.ts';
import { seedOrganisation, type SeededOrganisation } from '../testing/organisations.ts';
import { createWorkspace } from '../testing/workspaces.ts';

const TOKEN = 'agent-upstream-secret-5678';

const CARD = {
  name: 'Travel agent',
  url: 'https://agents.example.com/a2a',
  version: '1.0.0',
  skills: [
    { id: 'book-flight', name: 'Book a flight', description: 'Books flights', tags: ['travel'] },
    { id: 'cancel', name: 'Cancel a booking' },
  ],
};

/** A fake agent: its card at /.well-known/agent-card.json, only for the right bearer token; `/open` serves it to anyone. */
let agent: { url: string; seenAuthorization: Array<string | undefined>; close(): Promise<void> };
let h: ServiceHarness;
let other: SeededOrganisation;

before(async () => {
  const seenAuthorization: Array<string | undefined> = [];
  const server = createServer((req, res) => {
    seenAuthorization.push(req.headers.authorization);
    if (req.url === '/.well-known/agent-card.json' && req.headers.authorization === `Bearer ${TOKEN}`) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(CARD));
    } else if (req.url === '/.well-known/agent-card.json' && req.headers.authorization === undefined) {
      res.writeHead(404).end();
    } else if (req.url === '/.well-known/agent.json') {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ ...CARD, name: 'Open agent' }));
    } else {
      res.writeHead(401).end();
    }
  });
  const listening = await listenOnLoopback(server);
  agent = { url: listening.url, seenAuthorization, close: listening.close };
  h = await startServiceHarness({
    services: [controlPlane],
    // Loopback is trusted for this test's fake agent only.
    env: { TRUSTED_CUSTOM_HOSTS: '127.0.0.1', AGENT_CARD_TIMEOUT_MS: '3000' },
    // No real resolution: public names answer a public address, `internal.*` a private one.
    resolve: async (hostname) => (hostname.startsWith('internal') ? ['10.1.2.3'] : ['93.184.216.34']),
  });
  other = await seedOrganisation(h.db('control-plane').manager, 'agents-other');
});
after(async () => {
  await h.close();
  await agent.close();
});

const withHeaders = (extra: Record<string, unknown> = {}) => ({
  name: 'Travel agent',
  url: `${agent.url}/a2a`,
  auth_type: 'headers',
  configurations: { custom_headers: { Authorization: `Bearer ${TOKEN}` } },
  ...extra,
});

async function create(json: Record<string, unknown>, key = h.adminKey) {
  const res = await h.request('POST', '/v2/agent-integrations', { key, json });
  assert.equal(res.status, 200, res.text);
  return res.body as { id: string; slug: string };
}

async function workspaceKeyFor(workspaceId: string) {
  const res = await h.request('POST', '/v2/api-keys/workspace/service', {
    key: h.adminKey,
    json: { name: 'Agents key', workspace_id: workspaceId },
  });
  assert.equal(res.status, 200, res.text);
  return res.body as { id: string; key: string };
}

const changes = () =>
  h.bus
    .log(Topics.changes)
    .map((message) => fromBinary(events.ChangeEventSchema, message.value))
    .filter((change) => change.entity === 'agent_integration');

describe('POST /v2/agent-integrations/fetch-agent-card', () => {
  test('answers the card and where it was found, sending the auth header given', async () => {
    const res = await h.request('POST', '/v2/agent-integrations/fetch-agent-card', {
      key: h.adminKey,
      json: {
        endpoint: `${agent.url}/a2a`,
        organisation_id: h.organisationId,
        authType: 'headers',
        authToken: `Bearer ${TOKEN}`,
      },
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, {
      agent_card: CARD,
      url_fetched: `${agent.url}/.well-known/agent-card.json`,
    });
    const open = await h.request('POST', '/v2/agent-integrations/fetch-agent-card', {
      key: h.workspaceKey,
      json: { url: agent.url, headers: {} },
    });
    assert.equal(open.status, 200, open.text);
    assert.equal(open.body.agent_card.name, 'Open agent');
    assert.equal(open.body.url_fetched, `${agent.url}/.well-known/agent.json`);
  });

  test('every refusal is a 4xx in the one error shape naming the rule', async () => {
    for (const [json, status, code, param] of [
      [{ endpoint: 'http://internal.example.com/' }, 400, 'unsafe_custom_host', 'endpoint'],
      [{ endpoint: 'http://169.254.169.254/' }, 400, 'unsafe_custom_host', 'endpoint'],
      [{ url: 'http://[::1]:8080/' }, 400, 'unsafe_custom_host', 'url'],
      [{ endpoint: 'ftp://agents.example.com/' }, 400, 'unsafe_custom_host', 'endpoint'],
      [{ endpoint: 'https://agents.example.com/#x' }, 400, 'unsafe_custom_host', 'endpoint'],
      [{ endpoint: `${agent.url}/`, authType: 'headers' }, 400, null, 'authToken'],
      [{}, 400, null, 'endpoint'],
      [{ endpoint: 'https://a.example', url: 'https://b.example' }, 400, null, 'endpoint'],
      [{ endpoint: 'https://a.example', extra: 1 }, 400, null, null],
      [{ endpoint: 'https://a.example', headers: { 'bad header': 'x' } }, 400, null, null],
      [{ endpoint: 'https://a.example', headers: { Host: 'internal' } }, 400, null, null],
      [{ endpoint: 'https://a.example', headers: { 'Content-Length': '10' } }, 400, null, null],
      [
        { endpoint: 'https://a.example', authType: 'headers', authHeader: 'Cookie', authToken: 'x' },
        400,
        null,
        null,
      ],
      [{ endpoint: 'https://a.example', headers: { 'X-A': 'a\r\nInjected: 1' } }, 400, null, null],
      [{ endpoint: 'https://a.example', authType: 'oauth_auto' }, 501, 'not_implemented', 'authType'],
      [
        { endpoint: 'https://a.example', organisation_id: other.organisationId },
        404,
        null,
        'organisation_id',
      ],
    ] as const) {
      const res = await h.request('POST', '/v2/agent-integrations/fetch-agent-card', {
        key: h.adminKey,
        json,
      });
      assert.equal(res.status, status, `${JSON.stringify(json)}: ${res.text}`);
      assert.deepEqual(Object.keys(res.body.error).sort(), ['code', 'message', 'param', 'type']);
      if (code) assert.equal(res.body.error.code, code, res.text);
      if (param) assert.equal(res.body.error.param, param, res.text);
    }
  });

  test('needs agent_integrations.create', async () => {
    const workspace = await createWorkspace(h, 'Agents read only');
    const res = await h.request('POST', '/v2/api-keys/workspace/service', {
      key: h.adminKey,
      json: { name: 'read only', workspace_id: workspace.id, scopes: ['agent_integrations.read'] },
    });
    assert.equal(res.status, 200, res.text);
    const refused = await h.request('POST', '/v2/agent-integrations/fetch-agent-card', {
      key: res.body.key,
      json: { endpoint: agent.url },
    });
    assert.equal(refused.status, 403, refused.text);
  });
});

describe('agent integrations', () => {
  test('create fetches the card with the stored headers; headers masked in every answer and encrypted in the row', async () => {
    const before_ = changes().length;
    const created = await create(withHeaders({ slug: 'travel-agent', description: 'Books trips' }));
    assert.equal(created.slug, 'travel-agent');
    const got = await h.request('GET', '/v2/agent-integrations/travel-agent', { key: h.adminKey });
    assert.equal(got.status, 200, got.text);
    assert.equal(got.body.id, created.id);
    assert.equal(got.body.type, 'organisation');
    assert.equal(got.body.auth_type, 'headers');
    assert.deepEqual(got.body.configurations, { custom_headers: { Authorization: '********' } });
    assert.deepEqual(got.body.agent_card, CARD);
    assert.ok(got.body.agent_card_fetched_at);
    assert.equal(got.body.skills_count, 2);
    assert.ok(!got.text.includes(TOKEN));
    assert.ok(agent.seenAuthorization.includes(`Bearer ${TOKEN}`));
    assert.equal(got.body.agent_card_name, 'Travel agent');
    const listed = await h.request('GET', '/v2/agent-integrations?page_size=1000', { key: h.adminKey });
    const item = listed.body.data.find((i: { id: string }) => i.id === created.id);
    assert.ok(item);
    assert.equal(item.agent_card, undefined, 'a list leaves the cards out');
    assert.equal(item.agent_card_name, 'Travel agent');
    assert.equal(item.skills_count, 2);
    assert.deepEqual(item.configurations, { custom_headers: { Authorization: '********' } });
    assert.ok(!listed.text.includes(TOKEN));
    const [row] = await h
      .db('control-plane')
      .query(`SELECT configurations::text AS c FROM control_plane.agent_integrations WHERE id = $1`, [
        created.id,
      ]);
    assert.ok(!String(row.c).includes(TOKEN), 'the header is stored encrypted');

    const skills = await h.request('GET', `/v2/agent-integrations/${created.id}/skills`, { key: h.adminKey });
    assert.equal(skills.status, 200, skills.text);
    assert.equal(skills.body.total, 2);
    assert.deepEqual(
      skills.body.data.map((s: { id: string; tags: string[] }) => [s.id, s.tags]),
      [
        ['book-flight', ['travel']],
        ['cancel', []],
      ],
    );
    const putSkills = await h.request('PUT', `/v2/agent-integrations/${created.id}/skills`, {
      key: h.adminKey,
      json: { skills: ['cancel'] },
    });
    assert.equal(putSkills.status, 501);

    // The mask sent back keeps the header; a new card may be given.
    const kept = await h.request('PUT', `/v2/agent-integrations/${created.id}`, {
      key: h.adminKey,
      json: {
        configurations: { custom_headers: { Authorization: '********' } },
        agent_card: JSON.stringify({ name: 'Given', url: 'https://given.example' }),
      },
    });
    assert.equal(kept.status, 200, kept.text);
    const refetched = await h.request('PUT', `/v2/agent-integrations/${created.id}`, {
      key: h.adminKey,
      json: { fetch_agent_card: true },
    });
    assert.equal(refetched.status, 200, refetched.text);
    const again = await h.request('GET', `/v2/agent-integrations/${created.id}`, { key: h.adminKey });
    assert.deepEqual(again.body.agent_card, CARD, 'fetched again with the kept header');

    const deleted = await h.request('DELETE', `/v2/agent-integrations/${created.id}`, { key: h.adminKey });
    assert.equal(deleted.status, 200, deleted.text);
    assert.equal(
      (await h.request('GET', `/v2/agent-integrations/${created.id}`, { key: h.adminKey })).status,
      404,
    );
    const mine = changes()
      .slice(before_)
      .filter((c) => c.entityId === created.id);
    assert.deepEqual(
      mine.map((c) => c.action),
      [
        events.ChangeAction.CREATED,
        events.ChangeAction.UPDATED,
        events.ChangeAction.UPDATED,
        events.ChangeAction.DELETED,
      ],
    );
    assert.ok(mine.every((c) => c.organisationId === h.organisationId));
  });

  test('a card given is stored as is; fetch_agent_card false stores none', async () => {
    const given = await create({
      name: 'Given card',
      url: 'https://agents.example.com/a2a',
      auth_type: 'none',
      agent_card: { name: 'Given', url: 'https://agents.example.com/a2a', skills: 'not a list' },
    });
    const got = await h.request('GET', `/v2/agent-integrations/${given.id}`, { key: h.adminKey });
    assert.equal(got.body.agent_card.name, 'Given');
    assert.equal(got.body.agent_card_fetched_at, null);
    const skills = await h.request('GET', `/v2/agent-integrations/${given.id}/skills`, { key: h.adminKey });
    assert.deepEqual(skills.body, { data: [], total: 0 });
    const none = await create({
      name: 'No card',
      url: 'https://agents.example.com/a2a',
      auth_type: 'none',
      fetch_agent_card: false,
    });
    const noneGot = await h.request('GET', `/v2/agent-integrations/${none.id}`, { key: h.adminKey });
    assert.equal(noneGot.body.agent_card, null);
  });

  test('hostile or bad input is a 4xx naming the field, and nothing is stored', async () => {
    const count = async () =>
      Number(
        (
          await h
            .db('control-plane')
            .query(
              `SELECT count(*)::int AS n FROM control_plane.agent_integrations WHERE organisation_id = $1`,
              [h.organisationId],
            )
        )[0].n,
      );
    const before_ = await count();
    const base = {
      name: 'Bad',
      url: 'https://agents.example.com/',
      auth_type: 'none',
      fetch_agent_card: false,
    };
    for (const [json, status, param, code] of [
      [{ ...base, url: 'http://internal.example.com/' }, 400, 'url', 'unsafe_custom_host'],
      [{ ...base, url: 'http://10.0.0.1/' }, 400, 'url', 'unsafe_custom_host'],
      [{ ...base, url: 'http://metadata.google.internal/' }, 400, 'url', 'unsafe_custom_host'],
      [{ ...base, url: 'javascript:alert(1)' }, 400, 'url', 'unsafe_custom_host'],
      [{ ...base, url: 'https://agents.example.com/#frag' }, 400, 'url', 'unsafe_custom_host'],
      [{ ...base, auth_type: 'headers' }, 400, 'configurations.custom_headers', null],
      [{ ...base, auth_type: 'oauth_auto' }, 501, 'auth_type', 'not_implemented'],
      [{ ...base, name: '' }, 400, 'name', null],
      [{ ...base, name: 'x'.repeat(256) }, 400, 'name', null],
      [{ ...base, slug: '../etc' }, 400, 'slug', null],
      [{ ...base, owner_id: 'me' }, 400, null, null],
      [{ ...base, agent_card: ['not', 'an', 'object'] }, 400, 'agent_card', null],
      [
        { ...base, fetch_agent_card: undefined, agent_card: { name: 'n' } },
        422,
        'agent_card',
        'agent_card_missing_url',
      ],
      [
        { ...base, fetch_agent_card: undefined, agent_card: { url: 'u' } },
        422,
        'agent_card',
        'agent_card_missing_name',
      ],
      [
        { ...base, fetch_agent_card: undefined, agent_card: '{"url":' },
        400,
        'agent_card',
        'agent_card_invalid_json',
      ],
      [
        { ...base, fetch_agent_card: undefined, agent_card: '[1]' },
        422,
        'agent_card',
        'agent_card_not_object',
      ],
      [
        { ...base, fetch_agent_card: true, agent_card: { url: 'u', name: 'n' } },
        400,
        'fetch_agent_card',
        null,
      ],
      [
        { ...base, configurations: { custom_headers: { Authorization: '********' } }, auth_type: 'headers' },
        400,
        'configurations.custom_headers.Authorization',
        null,
      ],
      [{ ...base, workspace_id: 'no-such-workspace' }, 404, null, null],
      // The card cannot be fetched (the agent refuses the header): the create fails, nothing is stored.
      [
        {
          ...base,
          url: `${agent.url}/`,
          fetch_agent_card: true,
          auth_type: 'headers',
          configurations: { custom_headers: { Authorization: 'Bearer wrong' } },
        },
        422,
        'url',
        'agent_card_upstream_status',
      ],
    ] as const) {
      const res = await h.request('POST', '/v2/agent-integrations', { key: h.adminKey, json });
      assert.equal(res.status, status, `${JSON.stringify(json)}: ${res.text}`);
      assert.deepEqual(Object.keys(res.body.error).sort(), ['code', 'message', 'param', 'type']);
      if (param) assert.equal(res.body.error.param, param, res.text);
      if (code) assert.equal(res.body.error.code, code, res.text);
    }
    assert.equal(await count(), before_, 'no refused create stored anything');
    const taken = await create({ ...base, slug: 'taken-slug' });
    const again = await h.request('POST', '/v2/agent-integrations', {
      key: h.adminKey,
      json: { ...base, slug: 'taken-slug' },
    });
    assert.equal(again.status, 409);
    assert.equal(again.body.error.code, 'slug_taken');
    const badUpdate = await h.request('PUT', `/v2/agent-integrations/${taken.id}`, {
      key: h.adminKey,
      json: { url: 'http://internal.example.com/' },
    });
    assert.equal(badUpdate.status, 400);
    const emptyUpdate = await h.request('PUT', `/v2/agent-integrations/${taken.id}`, {
      key: h.adminKey,
      json: {},
    });
    assert.equal(emptyUpdate.status, 400);
    const still = await h.request('GET', `/v2/agent-integrations/${taken.id}`, { key: h.adminKey });
    assert.equal(still.body.url, base.url, 'a refused update changes nothing');
  });

  test('workspace access: a workspace key sees an organisation-level integration only once enabled for its workspace', async () => {
    const workspace = await createWorkspace(h, 'Agents access');
    const key = await workspaceKeyFor(workspace.id);
    const created = await create(withHeaders());
    assert.equal(
      (await h.request('GET', `/v2/agent-integrations/${created.id}`, { key: key.key })).status,
      404,
    );
    const listedBefore = await h.request('GET', '/v2/agent-integrations', { key: key.key });
    assert.ok(!listedBefore.body.data.some((i: { id: string }) => i.id === created.id));
    const enable = await h.request('PUT', `/v2/agent-integrations/${created.id}/workspaces`, {
      key: h.adminKey,
      json: { workspaces: [workspace.id] },
    });
    assert.equal(enable.status, 200, enable.text);
    const seen = await h.request('GET', `/v2/agent-integrations/${created.id}`, { key: key.key });
    assert.equal(seen.status, 200);
    assert.ok(!seen.text.includes(TOKEN));
    const listed = await h.request('GET', '/v2/agent-integrations', { key: key.key });
    assert.ok(listed.body.data.some((i: { id: string }) => i.id === created.id));
    const access = await h.request('GET', `/v2/agent-integrations/${created.id}/workspaces`, {
      key: h.adminKey,
    });
    assert.deepEqual(
      access.body.data.map((w: { id: string; enabled: boolean }) => [w.id, w.enabled]),
      [[workspace.id, true]],
    );
    assert.deepEqual(access.body.global_workspace_access, { enabled: false });
    // A workspace key reads it but cannot change it, nor its workspace access.
    for (const [method, path, json] of [
      ['PUT', `/v2/agent-integrations/${created.id}`, { name: 'x' }],
      ['DELETE', `/v2/agent-integrations/${created.id}`, undefined],
      ['PUT', `/v2/agent-integrations/${created.id}/workspaces`, { workspaces: [] }],
    ] as const) {
      const res = await h.request(method, path, { key: key.key, ...(json ? { json } : {}) });
      assert.equal(res.status, 403, `${method} ${path}: ${res.text}`);
    }
    const disabled = await h.request('PUT', `/v2/agent-integrations/${created.id}/workspaces`, {
      key: h.adminKey,
      json: { workspaces: [{ id: workspace.id, enabled: false }] },
    });
    assert.equal(disabled.status, 200);
    assert.equal(
      (await h.request('GET', `/v2/agent-integrations/${created.id}`, { key: key.key })).status,
      404,
    );
    // Its own workspace-level integration it manages.
    const own = await create(withHeaders(), key.key);
    const ownGot = await h.request('GET', `/v2/agent-integrations/${own.id}`, { key: key.key });
    assert.equal(ownGot.body.workspace_id, workspace.id);
    assert.equal(ownGot.body.type, 'workspace');
    const orgLevel = await h.request('POST', '/v2/agent-integrations', {
      key: key.key,
      json: withHeaders({ workspace_id: null }),
    });
    assert.equal(orgLevel.status, 403);
    const notOrgLevel = await h.request('PUT', `/v2/agent-integrations/${own.id}/workspaces`, {
      key: h.adminKey,
      json: { workspaces: [workspace.id] },
    });
    assert.equal(notOrgLevel.status, 400);
    assert.equal(notOrgLevel.body.error.code, 'not_organisation_level');
  });

  test('another organisation and another workspace get 404', async () => {
    const elsewhere = await createWorkspace(h, 'Agents elsewhere');
    const created = await create(withHeaders({ workspace_id: elsewhere.id }));
    for (const path of [
      `/v2/agent-integrations/${created.id}`,
      `/v2/agent-integrations/${created.slug}`,
      `/v2/agent-integrations/${created.id}/skills`,
      `/v2/agent-integrations/${created.id}/workspaces`,
    ]) {
      assert.equal((await h.request('GET', path, { key: other.adminKey })).status, 404, path);
      assert.equal((await h.request('GET', path, { key: h.workspaceKey })).status, 404, path);
    }
    const listed = await h.request('GET', '/v2/agent-integrations?page_size=1000', { key: other.adminKey });
    assert.ok(!listed.body.data.some((i: { id: string }) => i.id === created.id));
    for (const [method, json] of [
      ['PUT', { name: 'stolen' }],
      ['DELETE', undefined],
    ] as const) {
      const res = await h.request(method, `/v2/agent-integrations/${created.id}`, {
        key: other.adminKey,
        ...(json ? { json } : {}),
      });
      assert.equal(res.status, 404);
    }
    const still = await h.request('GET', `/v2/agent-integrations/${created.id}`, { key: h.adminKey });
    assert.equal(still.body.name, 'Travel agent');
  });

  test('agent servers are not built: 404', async () => {
    assert.equal((await h.request('GET', '/v2/agent-servers', { key: h.adminKey })).status, 404);
  });
});
