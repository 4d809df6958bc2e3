import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fromBinary } from '@bufbuild/protobuf';
import { Topics } from '@switchyard/adapters';
import { events } from '@switchyard/proto';
import { startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { controlPlane } from '../service.ts';
import { seedOrganisation, type SeededOrganisation } from '../testing/organisations.ts';
import { createWorkspace } from '../testing/workspaces.ts';

let h: ServiceHarness;
let other: SeededOrganisation;

before(async () => {
  h = await startServiceHarness({ services: [controlPlane] });
  other = await seedOrganisation(h.db('control-plane').manager, 'prompts-other');
});
after(() => h.close());

/** A new workspace with a service key of its own. */
async function workspaceWithKey(name: string) {
  const workspace = await createWorkspace(h, name);
  const key = await h.request('POST', '/v2/api-keys/workspace/service', {
    key: h.adminKey,
    json: { name: `${name} key`, workspace_id: workspace.id },
  });
  assert.equal(key.status, 200, key.text);
  return { ...workspace, key: key.body.key as string };
}

async function create(
  path: '/v2/prompts' | '/v2/prompts/partials',
  key: string,
  json: Record<string, unknown>,
) {
  const res = await h.request('POST', path, { key, json });
  assert.equal(res.status, 200, res.text);
  return res.body as { id: string; slug: string; version_id: string; object: string };
}

const chat = (content: string) =>
  JSON.stringify([
    { role: 'system', content },
    { role: 'user', content: '{{question}}' },
  ]);

describe('prompts: create, read, versions', () => {
  test('a content change is a new version; the default runs until makeDefault; a rename is no version', async () => {
    const created = await create('/v2/prompts', h.workspaceKey, {
      name: 'Support answer',
      slug: 'support-answer',
      string: chat('You are helpful.'),
      model: 'gpt-4o-mini',
      virtual_key: 'openai-prod',
      parameters: { temperature: 0.2 },
      tools: [{ type: 'function', function: { name: 'lookup' } }],
      tool_choice: 'auto',
      version_description: 'first',
    });
    assert.equal(created.slug, 'support-answer');
    assert.equal(created.object, 'prompt');

    const got = await h.request('GET', '/v2/prompts/support-answer', { key: h.workspaceKey });
    assert.equal(got.status, 200, got.text);
    assert.equal(got.body.id, created.id);
    assert.equal(got.body.prompt_version, 1);
    assert.equal(got.body.prompt_version_id, created.version_id);
    assert.equal(got.body.workspace_id, h.workspaceId);
    assert.deepEqual(got.body.parameters, { temperature: 0.2 });
    assert.equal(got.body.tool_choice, 'auto');
    assert.equal(got.body.prompt_version_description, 'first');

    const renamed = await h.request('PUT', `/v2/prompts/${created.id}`, {
      key: h.workspaceKey,
      json: { name: 'Support answers' },
    });
    assert.equal(renamed.status, 200, renamed.text);
    assert.equal(renamed.body.prompt_version_id, null);

    const changed = await h.request('PUT', `/v2/prompts/${created.id}`, {
      key: h.workspaceKey,
      json: { string: chat('You are terse.'), version_description: 'terser' },
    });
    assert.equal(changed.status, 200, changed.text);
    assert.ok(changed.body.prompt_version_id);

    const still = await h.request('GET', `/v2/prompts/${created.id}`, { key: h.workspaceKey });
    assert.equal(still.body.name, 'Support answers');
    assert.equal(still.body.prompt_version, 1, 'the default stays version 1');
    const latest = await h.request('GET', `/v2/prompts/${created.id}?version=latest`, {
      key: h.workspaceKey,
    });
    assert.equal(latest.body.prompt_version, 2);
    assert.match(latest.body.string, /terse/);
    assert.equal(latest.body.model, 'gpt-4o-mini', 'fields not given are kept');

    const versions = await h.request('GET', `/v2/prompts/${created.id}/versions`, { key: h.workspaceKey });
    assert.equal(versions.status, 200, versions.text);
    assert.deepEqual(
      versions.body.map((v: { prompt_version: number }) => v.prompt_version),
      [2, 1],
    );
    const byId = await h.request(
      'GET',
      `/v2/prompts/${created.id}/versions/${changed.body.prompt_version_id}`,
      {
        key: h.workspaceKey,
      },
    );
    assert.equal(byId.body.prompt_version, 2);
    const byNumber = await h.request('GET', `/v2/prompts/${created.id}/versions/1`, { key: h.workspaceKey });
    assert.equal(byNumber.body.prompt_version, 1);

    const labelled = await h.request('PUT', `/v2/prompts/${created.id}/versions/1`, {
      key: h.workspaceKey,
      json: { description: 'the original', label_id: '00000000-0000-4000-8000-000000000001' },
    });
    assert.equal(labelled.status, 200, labelled.text);
    const immutable = await h.request('PUT', `/v2/prompts/${created.id}/versions/1`, {
      key: h.workspaceKey,
      json: { string: 'changed' },
    });
    assert.equal(immutable.status, 400, immutable.text);
    const v1 = await h.request('GET', `/v2/prompts/${created.id}/versions/1`, { key: h.workspaceKey });
    assert.equal(v1.body.prompt_version_description, 'the original');
    assert.match(v1.body.string, /helpful/);

    const made = await h.request('PUT', `/v2/prompts/${created.id}/makeDefault`, {
      key: h.workspaceKey,
      json: { version: 2 },
    });
    assert.equal(made.status, 200, made.text);
    const now = await h.request('GET', `/v2/prompts/${created.id}`, { key: h.workspaceKey });
    assert.equal(now.body.prompt_version, 2);
    const missing = await h.request('PUT', `/v2/prompts/${created.id}/makeDefault`, {
      key: h.workspaceKey,
      json: { version: 9 },
    });
    assert.equal(missing.status, 404);

    const taken = await h.request('POST', '/v2/prompts', {
      key: h.workspaceKey,
      json: { name: 'Again', slug: 'support-answer', string: 'hi' },
    });
    assert.equal(taken.status, 409);
    assert.equal(taken.body.error.code, 'slug_taken');

    const deleted = await h.request('DELETE', `/v2/prompts/${created.id}`, { key: h.workspaceKey });
    assert.equal(deleted.status, 200, deleted.text);
    assert.equal((await h.request('GET', `/v2/prompts/${created.id}`, { key: h.workspaceKey })).status, 404);
    // Its slug is free again.
    await create('/v2/prompts', h.workspaceKey, { name: 'Again', slug: 'support-answer', string: 'hi' });
  });

  test('an organisation admin key names the workspace, and lists by it', async () => {
    const ws = await workspaceWithKey('Prompt admin ws');
    const refused = await h.request('POST', '/v2/prompts', {
      key: h.adminKey,
      json: { name: 'No workspace', string: 'hi' },
    });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error.param, 'workspace_id');
    const created = await create('/v2/prompts', h.adminKey, {
      name: 'By admin',
      workspace_id: ws.slug,
      string: 'hi',
    });
    const listed = await h.request('GET', `/v2/prompts?workspace_id=${ws.id}&search=by%20admin`, {
      key: h.adminKey,
    });
    assert.equal(listed.status, 200, listed.text);
    assert.deepEqual(
      listed.body.data.map((p: { id: string }) => p.id),
      [created.id],
    );
    assert.equal(listed.body.total, 1);
    const own = await h.request('GET', '/v2/prompts', { key: ws.key });
    assert.deepEqual(
      own.body.data.map((p: { id: string }) => p.id),
      [created.id],
    );
    // The default workspace's key does not see it.
    assert.equal((await h.request('GET', `/v2/prompts/${created.id}`, { key: h.workspaceKey })).status, 404);
    const foreign = await h.request('GET', `/v2/prompts?workspace_id=${ws.id}`, { key: h.workspaceKey });
    assert.equal(foreign.status, 404);
  });

  test('every change announces a "prompt" or "prompt_partial" change', async () => {
    const changes = () =>
      h.bus
        .log(Topics.changes)
        .map((message) => fromBinary(events.ChangeEventSchema, message.value))
        .filter((change) => change.entity === 'prompt' || change.entity === 'prompt_partial');
    const before_ = changes().length;
    const partial = await create('/v2/prompts/partials', h.workspaceKey, {
      name: 'Announced part',
      string: 'x',
    });
    const prompt = await create('/v2/prompts', h.workspaceKey, { name: 'Announced', string: 'hi' });
    await h.request('PUT', `/v2/prompts/${prompt.id}`, { key: h.workspaceKey, json: { string: 'ho' } });
    await h.request('PUT', `/v2/prompts/${prompt.id}/makeDefault`, {
      key: h.workspaceKey,
      json: { version: 2 },
    });
    await h.request('DELETE', `/v2/prompts/${prompt.id}`, { key: h.workspaceKey });
    const seen = changes().slice(before_);
    assert.deepEqual(
      seen.map((c) => [c.entity, c.entityId, c.action]),
      [
        ['prompt_partial', partial.id, events.ChangeAction.CREATED],
        ['prompt', prompt.id, events.ChangeAction.CREATED],
        ['prompt', prompt.id, events.ChangeAction.UPDATED],
        ['prompt', prompt.id, events.ChangeAction.UPDATED],
        ['prompt', prompt.id, events.ChangeAction.DELETED],
      ],
    );
    for (const change of seen) assert.equal(change.organisationId, h.organisationId);
  });
});

describe('partials and rendering', () => {
  test('renders variables and partials (nested), with root parameters winning; a missing variable is a 400', async () => {
    const inner = await create('/v2/prompts/partials', h.workspaceKey, {
      name: 'Signature',
      slug: 'signature',
      string: '-- {{team}}',
    });
    assert.equal(inner.object, 'partial');
    await create('/v2/prompts/partials', h.workspaceKey, {
      name: 'Tone',
      slug: 'tone',
      string: 'Be kind to {{name}}. {{> signature}}',
    });
    const prompt = await create('/v2/prompts', h.workspaceKey, {
      name: 'Greeter',
      slug: 'greeter',
      string: JSON.stringify([
        { role: 'system', content: '{{> tone}}' },
        { role: 'user', content: 'Hello, I am {{name}}{{#vip}} (VIP){{/vip}}' },
      ]),
      model: 'gpt-4o',
      parameters: { temperature: 0.5, max_completion_tokens: 100 },
    });

    const rendered = await h.request('POST', `/v2/prompts/${prompt.slug}/render`, {
      key: h.workspaceKey,
      json: { variables: { name: 'Ada', team: 'Support', vip: true }, temperature: 0.9, stream: false },
    });
    assert.equal(rendered.status, 200, rendered.text);
    assert.equal(rendered.body.success, true);
    assert.deepEqual(rendered.body.data, {
      model: 'gpt-4o',
      temperature: 0.9,
      max_completion_tokens: 100,
      messages: [
        { role: 'system', content: 'Be kind to Ada. -- Support' },
        { role: 'user', content: 'Hello, I am Ada (VIP)' },
      ],
    });

    const missing = await h.request('POST', `/v2/prompts/${prompt.id}/render`, {
      key: h.workspaceKey,
      json: { variables: { name: 'Ada' } },
    });
    assert.equal(missing.status, 400, missing.text);
    assert.equal(missing.body.error.code, 'missing_prompt_variables');
    assert.match(missing.body.error.message, /'team'/);

    // Versions by suffix and query.
    await h.request('PUT', `/v2/prompts/${prompt.id}`, {
      key: h.workspaceKey,
      json: { string: 'Plain {{name}}' },
    });
    const v2 = await h.request('POST', `/v2/prompts/${prompt.id}@latest/render`, {
      key: h.workspaceKey,
      json: { variables: { name: 'Bo' } },
    });
    assert.equal(v2.status, 200, v2.text);
    assert.deepEqual(v2.body.data.messages, [{ role: 'user', content: 'Plain Bo' }]);
    const v2q = await h.request('POST', `/v2/prompts/${prompt.id}/render?version=2`, {
      key: h.workspaceKey,
      json: { variables: { name: 'Bo' } },
    });
    assert.deepEqual(v2q.body.data.messages, [{ role: 'user', content: 'Plain Bo' }]);
    const v1 = await h.request('POST', `/v2/prompts/greeter@1/render`, {
      key: h.workspaceKey,
      json: { variables: { name: 'Bo', team: 'T' } },
    });
    assert.equal(v1.body.data.messages.length, 2);
    const bad = await h.request('POST', `/v2/prompts/greeter@x/render`, {
      key: h.workspaceKey,
      json: { variables: {} },
    });
    assert.equal(bad.status, 400);
    const none = await h.request('POST', `/v2/prompts/greeter@7/render`, {
      key: h.workspaceKey,
      json: { variables: {} },
    });
    assert.equal(none.status, 404);

    // A partial the default version includes cannot go.
    const inUse = await h.request('DELETE', '/v2/prompts/partials/tone', { key: h.workspaceKey });
    assert.equal(inUse.status, 409, inUse.text);
    assert.equal(inUse.body.error.code, 'prompt_partial_in_use');
    assert.match(inUse.body.error.message, /greeter/);
    const signatureInUse = await h.request('DELETE', '/v2/prompts/partials/signature', {
      key: h.workspaceKey,
    });
    assert.equal(signatureInUse.status, 409);
    assert.match(signatureInUse.body.error.message, /tone/);
  });

  test('unknown partials and cycles are 400s; partials have versions and a default', async () => {
    const unknown = await h.request('POST', '/v2/prompts', {
      key: h.workspaceKey,
      json: { name: 'Broken', string: 'Hi {{> nowhere}}' },
    });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.error.code, 'prompt_partial_not_found');
    assert.equal(unknown.body.error.param, 'string', 'the error names the template field');
    const syntax = await h.request('POST', '/v2/prompts', {
      key: h.workspaceKey,
      json: { name: 'Broken', string: 'Hi {{#open}}' },
    });
    assert.equal(syntax.status, 400);
    assert.equal(syntax.body.error.code, 'invalid_prompt_template');
    assert.equal(syntax.body.error.param, 'string');

    const a = await create('/v2/prompts/partials', h.workspaceKey, {
      name: 'Cycle A',
      slug: 'cycle-a',
      string: 'a',
    });
    await create('/v2/prompts/partials', h.workspaceKey, {
      name: 'Cycle B',
      slug: 'cycle-b',
      string: 'b {{> cycle-a}}',
    });
    const cycle = await h.request('PUT', `/v2/prompts/partials/${a.id}`, {
      key: h.workspaceKey,
      json: { string: 'a {{> cycle-b}}' },
    });
    assert.equal(cycle.status, 400, cycle.text);
    assert.equal(cycle.body.error.code, 'prompt_partial_cycle');
    const self = await h.request('PUT', `/v2/prompts/partials/${a.id}`, {
      key: h.workspaceKey,
      json: { string: 'a {{> cycle-a}}' },
    });
    assert.equal(self.status, 400);
    assert.equal(self.body.error.code, 'prompt_partial_cycle');

    const updated = await h.request('PUT', `/v2/prompts/partials/${a.id}`, {
      key: h.workspaceKey,
      json: { string: 'a2', version_description: 'second' },
    });
    assert.equal(updated.status, 200, updated.text);
    assert.ok(updated.body.prompt_partial_version_id);
    const versions = await h.request('GET', `/v2/prompts/partials/${a.id}/versions`, { key: h.workspaceKey });
    assert.deepEqual(
      versions.body.map((v: { version: number; string: string }) => [v.version, v.string]),
      [
        [2, 'a2'],
        [1, 'a'],
      ],
    );
    const got = await h.request('GET', `/v2/prompts/partials/cycle-a`, { key: h.workspaceKey });
    assert.equal(got.body.version, 1);
    assert.equal(got.body.string, 'a');
    await h.request('PUT', `/v2/prompts/partials/${a.id}/makeDefault`, {
      key: h.workspaceKey,
      json: { version: 2 },
    });
    const now = await h.request('GET', `/v2/prompts/partials/cycle-a`, { key: h.workspaceKey });
    assert.equal(now.body.string, 'a2');
    assert.equal(now.body.prompt_partial_version_id, updated.body.prompt_partial_version_id);
    const listed = await h.request('GET', '/v2/prompts/partials?search=cycle', { key: h.workspaceKey });
    assert.equal(listed.body.total, 2);
    assert.ok(listed.body.data.every((p: { object: string }) => p.object === 'partial'));
  });
});

describe('sharing and forks', () => {
  test('a shared prompt is read, listed, rendered and forked by the other workspace, changed only by its own', async () => {
    const owner = await workspaceWithKey('Share owner');
    const reader = await workspaceWithKey('Share reader');
    const stranger = await workspaceWithKey('Share stranger');
    await create('/v2/prompts/partials', owner.key, {
      name: 'Owner rules',
      slug: 'owner-rules',
      string: 'Rule: {{rule}}',
    });
    const prompt = await create('/v2/prompts', owner.key, {
      name: 'Shared one',
      slug: 'shared-one',
      string: '{{> owner-rules}} Q: {{q}}',
    });

    assert.equal((await h.request('GET', `/v2/prompts/${prompt.id}`, { key: reader.key })).status, 404);
    const shared = await h.request('POST', `/v2/prompts/${prompt.id}/share`, {
      key: owner.key,
      json: { workspace_ids: [reader.slug] },
    });
    assert.equal(shared.status, 200, shared.text);
    assert.deepEqual(shared.body.shared_with, [{ id: reader.id, slug: reader.slug }]);

    const read = await h.request('GET', '/v2/prompts/shared-one', { key: reader.key });
    assert.equal(read.status, 200, read.text);
    assert.equal(read.body.workspace_id, owner.id);
    // Its partials come from the owning workspace.
    const rendered = await h.request('POST', '/v2/prompts/shared-one/render', {
      key: reader.key,
      json: { variables: { rule: 'be brief', q: 'why?' } },
    });
    assert.equal(rendered.status, 200, rendered.text);
    assert.deepEqual(rendered.body.data.messages, [{ role: 'user', content: 'Rule: be brief Q: why?' }]);

    const listedShared = await h.request('GET', '/v2/prompts?type=shared&show_prompt_share=true', {
      key: reader.key,
    });
    assert.equal(listedShared.status, 200, listedShared.text);
    assert.deepEqual(
      listedShared.body.data.map((p: { id: string }) => p.id),
      [prompt.id],
    );
    assert.deepEqual(listedShared.body.data[0].shared_from, {
      workspace_id: owner.id,
      workspace_slug: owner.slug,
    });
    const readerOwn = await h.request('GET', '/v2/prompts', { key: reader.key });
    assert.equal(readerOwn.body.total, 0, 'not among its own');
    const ownerList = await h.request('GET', '/v2/prompts?show_prompt_share=true', { key: owner.key });
    const item = ownerList.body.data.find((p: { id: string }) => p.id === prompt.id);
    assert.deepEqual(item.shared_with, [{ id: reader.id, slug: reader.slug }]);
    assert.equal(item.shared_from, null);

    // Only the owner changes it.
    const denied = [
      await h.request('PUT', `/v2/prompts/${prompt.id}`, { key: reader.key, json: { name: 'Mine' } }),
      await h.request('DELETE', `/v2/prompts/${prompt.id}`, { key: reader.key }),
      await h.request('POST', `/v2/prompts/${prompt.id}/share`, {
        key: reader.key,
        json: { workspace_ids: [stranger.id] },
      }),
      await h.request('PUT', `/v2/prompts/${prompt.id}/makeDefault`, {
        key: reader.key,
        json: { version: 1 },
      }),
    ];
    for (const res of denied) {
      assert.equal(res.status, 403, res.text);
      assert.equal(res.body.error.code, 'prompt_not_owned');
    }
    assert.equal((await h.request('GET', `/v2/prompts/${prompt.id}`, { key: stranger.key })).status, 404);

    // Another organisation sees nothing, and its workspaces are unknown here.
    for (const key of [other.adminKey, other.workspaceKey]) {
      assert.equal((await h.request('GET', `/v2/prompts/${prompt.id}`, { key })).status, 404);
      assert.equal((await h.request('GET', '/v2/prompts/shared-one', { key })).status, 404);
      assert.equal(
        (await h.request('POST', `/v2/prompts/${prompt.id}/render`, { key, json: { variables: {} } })).status,
        404,
      );
    }
    const crossOrg = await h.request('POST', `/v2/prompts/${prompt.id}/share`, {
      key: owner.key,
      json: { workspace_ids: [other.workspaceId] },
    });
    assert.equal(crossOrg.status, 404);
    const toItself = await h.request('POST', `/v2/prompts/${prompt.id}/share`, {
      key: owner.key,
      json: { workspace_ids: [owner.id] },
    });
    assert.equal(toItself.status, 400);

    // A shared prompt cannot be deleted.
    const blocked = await h.request('DELETE', `/v2/prompts/${prompt.id}`, { key: owner.key });
    assert.equal(blocked.status, 409);
    assert.equal(blocked.body.error.code, 'prompt_shared');
    assert.match(blocked.body.error.message, new RegExp(reader.slug));

    // A fork needs the partial where it lands: shared too, then the fork works.
    const noPartial = await h.request('POST', `/v2/prompts/${prompt.id}/fork`, {
      key: reader.key,
      json: { workspace_id: reader.id },
    });
    assert.equal(noPartial.status, 400, noPartial.text);
    assert.equal(noPartial.body.error.code, 'prompt_partial_not_found');
    const partialShared = await h.request('POST', '/v2/prompts/partials/owner-rules/share', {
      key: owner.key,
      json: { workspace_ids: [reader.id] },
    });
    assert.equal(partialShared.status, 200, partialShared.text);
    const forked = await h.request('POST', `/v2/prompts/${prompt.id}/fork`, {
      key: reader.key,
      json: { workspace_id: reader.id, name: 'My copy', slug: 'my-copy' },
    });
    assert.equal(forked.status, 200, forked.text);
    const copy = await h.request('GET', '/v2/prompts/my-copy', { key: reader.key });
    assert.equal(copy.body.workspace_id, reader.id);
    assert.equal(copy.body.prompt_version, 1);
    assert.equal(copy.body.string, '{{> owner-rules}} Q: {{q}}');
    const renamed = await h.request('PUT', '/v2/prompts/my-copy', {
      key: reader.key,
      json: { name: 'Mine now' },
    });
    assert.equal(renamed.status, 200, renamed.text);
    const intoOther = await h.request('POST', `/v2/prompts/${prompt.id}/fork`, {
      key: reader.key,
      json: { workspace_id: stranger.id },
    });
    assert.equal(intoOther.status, 404, 'a workspace key forks into its own workspace only');

    // Unshared: gone for the reader.
    const unshared = await h.request('POST', `/v2/prompts/${prompt.id}/unshare`, {
      key: owner.key,
      json: { workspace_ids: [reader.slug] },
    });
    assert.equal(unshared.status, 200, unshared.text);
    assert.deepEqual(unshared.body.shared_with, []);
    assert.equal((await h.request('GET', `/v2/prompts/${prompt.id}`, { key: reader.key })).status, 404);

    // PUT replaces; DELETE removes all.
    const replaced = await h.request('PUT', `/v2/prompts/${prompt.id}/share`, {
      key: owner.key,
      json: { workspace_ids: [stranger.id, reader.id] },
    });
    assert.deepEqual(
      replaced.body.shared_with.map((w: { id: string }) => w.id).sort(),
      [stranger.id, reader.id].sort(),
    );
    const cleared = await h.request('DELETE', `/v2/prompts/${prompt.id}/share`, { key: owner.key });
    assert.deepEqual(cleared.body.shared_with, []);
    assert.equal((await h.request('DELETE', `/v2/prompts/${prompt.id}`, { key: owner.key })).status, 200);
  });

  test('the directory finds a shared prompt from the other workspace, with its partials; unknown is unset', async () => {
    const owner = await workspaceWithKey('Directory owner');
    const reader = await workspaceWithKey('Directory reader');
    await create('/v2/prompts/partials', owner.key, {
      name: 'Dir leaf',
      slug: 'dir-leaf',
      string: 'leaf {{x}}',
    });
    const middle = await create('/v2/prompts/partials', owner.key, {
      name: 'Dir middle',
      slug: 'dir-middle',
      string: 'middle {{> dir-leaf}}',
    });
    await create('/v2/prompts/partials', owner.key, {
      name: 'Dir unused',
      slug: 'dir-unused',
      string: 'unused',
    });
    const prompt = await create('/v2/prompts', owner.key, {
      name: 'Directory prompt',
      slug: 'dir-prompt',
      string: 'top {{> dir-middle}}',
      model: 'gpt-4o',
      virtual_key: 'openai',
      parameters: { temperature: 0.1 },
      tools: [{ type: 'function', function: { name: 'f' } }],
      tool_choice: 'auto',
    });
    const directory = h.client('promptDirectory');
    const ask = (workspaceId: string, idOrSlug: string, version = '') =>
      directory.getPrompt({ organisationId: h.organisationId, workspaceId, idOrSlug, version });

    assert.equal((await ask(reader.id, prompt.slug)).prompt, undefined, 'not shared yet');
    await h.request('POST', `/v2/prompts/${prompt.id}/share`, {
      key: owner.key,
      json: { workspace_ids: [reader.id] },
    });
    const { prompt: route } = await ask(reader.id, prompt.slug);
    assert.ok(route);
    assert.equal(route.id, prompt.id);
    assert.equal(route.workspaceId, owner.id);
    assert.equal(route.versionNumber, 1);
    assert.equal(route.versionId, prompt.version_id);
    assert.equal(route.template, 'top {{> dir-middle}}');
    assert.equal(route.model, 'gpt-4o');
    assert.equal(route.virtualKey, 'openai');
    assert.deepEqual(JSON.parse(route.parametersJson), {
      temperature: 0.1,
      tools: [{ type: 'function', function: { name: 'f' } }],
      tool_choice: 'auto',
    });
    assert.deepEqual(route.partials, { 'dir-middle': 'middle {{> dir-leaf}}', 'dir-leaf': 'leaf {{x}}' });
    assert.equal(route.partialVersionIds['dir-middle'], middle.version_id);

    await h.request('PUT', `/v2/prompts/${prompt.id}`, { key: owner.key, json: { string: 'second' } });
    assert.equal((await ask(owner.id, prompt.id, 'latest')).prompt?.template, 'second');
    assert.equal((await ask(owner.id, prompt.id, '1')).prompt?.template, 'top {{> dir-middle}}');
    assert.equal((await ask(owner.id, prompt.id)).prompt?.versionNumber, 1);
    assert.equal((await ask(owner.id, prompt.id, '9')).prompt, undefined);
    assert.equal((await ask(owner.id, prompt.id, 'nonsense')).prompt, undefined);
    assert.equal((await ask(owner.id, 'no-such-prompt')).prompt, undefined);
    assert.equal((await ask(h.workspaceId, prompt.id)).prompt, undefined, 'a workspace not shared with');
    assert.equal(
      (
        await directory.getPrompt({
          organisationId: other.organisationId,
          workspaceId: other.workspaceId,
          idOrSlug: prompt.id,
          version: '',
        })
      ).prompt,
      undefined,
    );
    assert.equal(
      (
        await directory.getPrompt({
          organisationId: 'not-a-uuid',
          workspaceId: 'x',
          idOrSlug: prompt.id,
          version: '',
        })
      ).prompt,
      undefined,
    );
  });
});

describe('workspace delete', () => {
  test('is refused while the workspace shares prompts or partials, names them, and archives them after an unshare', async () => {
    const owner = await workspaceWithKey('Deleted owner');
    const reader = await workspaceWithKey('Delete reader');
    const partial = await create('/v2/prompts/partials', owner.key, {
      name: 'Del part',
      slug: 'del-part',
      string: 'p',
    });
    const prompt = await create('/v2/prompts', owner.key, {
      name: 'Del prompt',
      slug: 'del-prompt',
      string: 'hi',
    });
    const kept = await create('/v2/prompts', owner.key, {
      name: 'Del private',
      slug: 'del-private',
      string: 'hi',
    });
    const inbound = await create('/v2/prompts', reader.key, {
      name: 'Inbound',
      slug: 'del-inbound',
      string: 'hi',
    });
    await h.request('POST', `/v2/prompts/${inbound.id}/share`, {
      key: reader.key,
      json: { workspace_ids: [owner.id] },
    });
    for (const path of [`/v2/prompts/${prompt.id}/share`, `/v2/prompts/partials/${partial.id}/share`]) {
      const res = await h.request('POST', path, { key: owner.key, json: { workspace_ids: [reader.id] } });
      assert.equal(res.status, 200, res.text);
    }

    const refused = await h.request('DELETE', `/v2/workspaces/${owner.id}`, { key: h.adminKey });
    assert.equal(refused.status, 409, refused.text);
    assert.equal(refused.body.error.code, 'workspace_has_shared_prompts');
    assert.match(refused.body.error.message, /prompt 'del-prompt'/);
    assert.match(refused.body.error.message, /partial 'del-part'/);
    // Nothing of it changed.
    assert.equal((await h.request('GET', `/v2/prompts/${kept.id}`, { key: owner.key })).status, 200);

    await h.request('DELETE', `/v2/prompts/${prompt.id}/share`, { key: owner.key });
    const stillRefused = await h.request('DELETE', `/v2/workspaces/${owner.id}`, { key: h.adminKey });
    assert.equal(stillRefused.status, 409);
    assert.doesNotMatch(stillRefused.body.error.message, /del-prompt/);
    await h.request('DELETE', `/v2/prompts/partials/${partial.id}/share`, { key: owner.key });

    const deleted = await h.request('DELETE', `/v2/workspaces/${owner.id}`, { key: h.adminKey });
    assert.equal(deleted.status, 200, deleted.text);
    for (const id of [prompt.id, kept.id]) {
      assert.equal((await h.request('GET', `/v2/prompts/${id}`, { key: h.adminKey })).status, 404);
    }
    const shares = await h.request('GET', '/v2/prompts?show_prompt_share=true', { key: reader.key });
    const item = shares.body.data.find((p: { id: string }) => p.id === inbound.id);
    assert.deepEqual(item.shared_with, [], 'the share with the deleted workspace is gone');
    // Its slugs are free again.
    await create('/v2/prompts', reader.key, { name: 'Reuse', slug: 'del-prompt', string: 'hi' });
  });
});

describe('removed and hostile requests', () => {
  test('organisation-level prompt routes answer 410, whatever the method and path', async () => {
    for (const [method, path] of [
      ['GET', '/v2/organisation/prompts'],
      ['POST', '/v2/organisation/prompts'],
      ['GET', '/v2/organisation/prompts/abc'],
      ['PUT', '/v2/organisation/prompts/abc/makeDefault'],
      ['DELETE', '/v2/organisation/prompts/partials/abc'],
      ['POST', '/v2/organisation/prompts/partials'],
    ] as const) {
      const res = await h.request(method, path, {
        key: h.adminKey,
        ...(method === 'GET' || method === 'DELETE' ? {} : { json: {} }),
      });
      assert.equal(res.status, 410, `${method} ${path}: ${res.text}`);
      assert.equal(res.body.error.code, 'route_removed');
      assert.match(res.body.error.message, /\/v2\/prompts/);
      assert.match(res.body.error.message, /workspace/);
    }
  });

  test('bad input is a clear 4xx, never a 500', async () => {
    const prompt = await create('/v2/prompts', h.workspaceKey, {
      name: 'Hostile target',
      string: 'hi {{x}}',
    });
    const cases: Array<[string, string, unknown, number, string?]> = [
      ['POST', '/v2/prompts', { name: 'x', string: 'hi', surprise: 1 }, 400],
      ['POST', '/v2/prompts', { name: 'x', string: 'a'.repeat(1_000_001) }, 400],
      ['POST', '/v2/prompts', { name: 'x', string: '' }, 400],
      ['POST', '/v2/prompts', { name: 'x', string: 'hi', collection_id: 'c1' }, 501],
      ['POST', '/v2/prompts', { name: 'x', string: 'hi', virtual_key: '@openai' }, 400],
      ['POST', '/v2/prompts', { name: 'x', string: 'hi', parameters: [1] }, 400],
      ['POST', '/v2/prompts', { name: 'x', string: 'hi', parameters: { big: 'a'.repeat(300_000) } }, 400],
      ['POST', '/v2/prompts', { name: 'x', string: 'hi', slug: 'bad slug!' }, 400],
      ['POST', '/v2/prompts', { name: 'x', string: 'hi', workspace_id: 'no-such-ws' }, 404],
      ['GET', '/v2/prompts/%27%3B--', undefined, 404],
      ['GET', '/v2/prompts/00000000-0000-4000-8000-000000000000', undefined, 404],
      ['GET', `/v2/prompts/${prompt.id}?version=abc`, undefined, 400],
      ['GET', `/v2/prompts/${prompt.id}?version=99`, undefined, 404],
      ['GET', `/v2/prompts/${prompt.id}/versions/not-a-version`, undefined, 404],
      ['GET', `/v2/prompts/${prompt.id}/versions/00000000-0000-4000-8000-000000000000`, undefined, 404],
      ['PUT', `/v2/prompts/${prompt.id}`, {}, 400],
      ['PUT', `/v2/prompts/${prompt.id}/makeDefault`, { version: 'one' }, 400],
      ['PUT', `/v2/prompts/${prompt.id}/makeDefault`, { version: 1.5 }, 400],
      ['PUT', `/v2/prompts/${prompt.id}/versions/1`, { label_id: 'nope' }, 400],
      ['POST', `/v2/prompts/${prompt.id}/share`, { workspace_ids: [] }, 400],
      ['POST', `/v2/prompts/${prompt.id}/share`, { workspace_ids: 'all' }, 400],
      ['POST', `/v2/prompts/${prompt.id}/render`, { variables: 'x' }, 400],
      ['POST', `/v2/prompts/${prompt.id}/render`, { variables: {}, messages: [] }, 400],
      ['POST', `/v2/prompts/${prompt.id}/render`, { variables: {} }, 400, 'missing_prompt_variables'],
      ['POST', `/v2/prompts/${prompt.id}/fork`, { workspace_id: h.workspaceId }, 400],
      ['GET', '/v2/prompts?type=everything', undefined, 400],
      ['GET', '/v2/prompts?collection_id=c', undefined, 501],
    ];
    for (const [method, path, json, status, code] of cases) {
      const res = await h.request(method, path, {
        key: h.workspaceKey,
        ...(json === undefined ? {} : { json }),
      });
      assert.equal(res.status, status, `${method} ${path.slice(0, 80)}: ${res.text.slice(0, 300)}`);
      assert.ok(res.body.error?.message, 'the one error shape');
      if (code) assert.equal(res.body.error.code, code);
    }
    const typeShared = await h.request('GET', '/v2/prompts?type=shared', { key: h.adminKey });
    assert.equal(typeShared.status, 400);
    // The prompt is as it was.
    const after_ = await h.request('GET', `/v2/prompts/${prompt.id}/versions`, { key: h.workspaceKey });
    assert.equal(after_.body.length, 1);
  });

  test('keys without the prompt scopes are refused', async () => {
    const limited = await h.request('POST', '/v2/api-keys/workspace/service', {
      key: h.adminKey,
      json: { name: 'no prompts', workspace_id: h.workspaceId, scopes: ['configs.read'] },
    });
    assert.equal(limited.status, 200, limited.text);
    const res = await h.request('GET', '/v2/prompts', { key: limited.body.key });
    assert.equal(res.status, 403);
    const render = await h.request('POST', '/v2/prompts/x/render', {
      key: limited.body.key,
      json: { variables: {} },
    });
    assert.equal(render.status, 403);
  });
});
