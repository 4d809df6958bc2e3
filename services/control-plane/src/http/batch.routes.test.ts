// Batch records: what gateways report through BatchRecordService, and the /v2/batches routes a
// workspace key reads and changes them with. Tenancy: another workspace or organisation finds none.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { controlPlane } from '../service.ts';
import { seedOrganisation, type SeededOrganisation } from '../testing/organisations.ts';
import { createWorkspace } from '../testing/workspaces.ts';

let h: ServiceHarness;
let other: SeededOrganisation;
let elsewhere: { workspaceId: string; key: string };

before(async () => {
  h = await startServiceHarness({ services: [controlPlane] });
  other = await seedOrganisation(h.db('control-plane').manager, `batches-other-${randomUUID().slice(0, 8)}`);
  const workspace = await createWorkspace(h, `Batches elsewhere ${randomUUID().slice(0, 8)}`);
  const res = await h.request('POST', '/v2/api-keys/workspace/service', {
    key: h.adminKey,
    json: { name: 'elsewhere', workspace_id: workspace.id },
  });
  assert.equal(res.status, 200, res.text);
  elsewhere = { workspaceId: workspace.id, key: res.body.key as string };
});
after(() => h.close());

const batchId = () => `batch_${randomUUID().replaceAll('-', '')}`;

function report(id: string, fields: Record<string, string> = {}) {
  return {
    batch: {
      id,
      organisationId: h.organisationId,
      workspaceId: h.workspaceId,
      apiKeyId: 'key-1',
      provider: 'openai',
      integrationSlug: 'openai-main',
      status: 'validating',
      endpoint: '/v1/chat/completions',
      inputFileId: 'file-in',
      ...fields,
    },
  };
}

const record = (id: string, fields: Record<string, string> = {}) =>
  h.client('batchRecords').recordBatch(report(id, fields));

const get = (id: string, key = h.workspaceKey) =>
  h.request('GET', `/v2/batches/${encodeURIComponent(id)}`, { key });
const put = (id: string, json: unknown, key = h.workspaceKey) =>
  h.request('PUT', `/v2/batches/${encodeURIComponent(id)}`, { key, json });

describe('recording batches (BatchRecordService)', () => {
  test('a report creates the record; later ones update status and file ids, keep where it went, never move created_at, and ignore empty fields', async () => {
    const id = batchId();
    const first = await record(id);
    assert.equal(first.batch?.status, 'validating');
    assert.equal(first.batch?.outputFileId, '');
    const createdAt = first.batch!.createdAtMs;

    const second = await record(id, {
      status: 'completed',
      outputFileId: 'file-out',
      errorFileId: 'file-err',
      // A later answer read through another key or integration does not rewrite where it went.
      apiKeyId: 'key-2',
      integrationSlug: 'other-integration',
      endpoint: '',
      inputFileId: '',
    });
    assert.equal(second.batch?.createdAtMs, createdAt);
    assert.equal(second.batch?.status, 'completed');
    assert.equal(second.batch?.outputFileId, 'file-out');
    assert.equal(second.batch?.errorFileId, 'file-err');
    assert.equal(second.batch?.apiKeyId, 'key-1');
    assert.equal(second.batch?.integrationSlug, 'openai-main');
    assert.equal(second.batch?.endpoint, '/v1/chat/completions');
    assert.equal(second.batch?.inputFileId, 'file-in');
    assert.ok(Number(second.batch?.updatedAtMs) >= Number(createdAt));

    // A late answer of an earlier status does not move a finished batch back; empty fields keep theirs.
    const late = await record(id, { status: 'in_progress', outputFileId: '', errorFileId: '' });
    assert.equal(late.batch?.status, 'completed');
    assert.equal(late.batch?.outputFileId, 'file-out');

    const { batch } = await h
      .client('batchRecords')
      .getBatch({ organisationId: h.organisationId, workspaceId: h.workspaceId, id });
    assert.equal(batch?.status, 'completed');
    assert.equal(batch?.createdAtMs, createdAt);
  });

  test('simultaneous reports of one batch make one record', async () => {
    const id = batchId();
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => record(id, { status: i % 2 ? 'in_progress' : 'validating' })),
    );
    assert.ok(results.every((r) => r.batch?.id === id));
    const [row] = (await h
      .db('control-plane')
      .query(`SELECT count(*)::int AS n FROM control_plane.batches WHERE id = $1`, [id])) as [{ n: number }];
    assert.equal(row.n, 1);
    assert.equal(new Set(results.map((r) => r.batch?.createdAtMs)).size, 1);
  });

  test('another workspace or organisation neither finds a batch nor takes it over', async () => {
    const id = batchId();
    await record(id, { status: 'in_progress' });
    const directory = h.client('batchRecords');
    assert.equal(
      (await directory.getBatch({ organisationId: h.organisationId, workspaceId: elsewhere.workspaceId, id }))
        .batch,
      undefined,
    );
    assert.equal(
      (await directory.getBatch({ organisationId: other.organisationId, workspaceId: other.workspaceId, id }))
        .batch,
      undefined,
    );
    // Another workspace reporting the same id changes nothing of this workspace's record.
    const taken = await record(id, { workspaceId: elsewhere.workspaceId, status: 'cancelled' });
    assert.equal(taken.batch, undefined);
    const res = await get(id);
    assert.equal(res.body.status, 'in_progress');
    // Another organisation's batch of the same provider id is its own record.
    const theirs = await record(id, {
      organisationId: other.organisationId,
      workspaceId: other.workspaceId,
      status: 'failed',
    });
    assert.equal(theirs.batch?.status, 'failed');
    assert.equal((await get(id)).body.status, 'in_progress');
    assert.equal((await get(id, other.workspaceKey)).body.status, 'failed');
  });

  test('malformed reports and lookups record and find nothing', async () => {
    const directory = h.client('batchRecords');
    assert.equal((await directory.recordBatch({})).batch, undefined);
    assert.equal((await record('', {})).batch, undefined);
    assert.equal((await record(batchId(), { workspaceId: 'not-a-uuid' })).batch, undefined);
    assert.equal((await record('x'.repeat(300))).batch, undefined);
    assert.equal(
      (await directory.getBatch({ organisationId: 'nope', workspaceId: '', id: 'x' })).batch,
      undefined,
    );
  });
});

describe('/v2/batches', () => {
  test('GET lists the workspace’s records, newest first, paginated and filtered by status and provider or integration', async () => {
    const ids = [batchId(), batchId(), batchId()];
    await record(ids[0]!, { status: 'completed', integrationSlug: 'filter-a' });
    await record(ids[1]!, { status: 'in_progress', integrationSlug: 'filter-a' });
    await record(ids[2]!, { status: 'completed', integrationSlug: 'filter-b', provider: 'azure-openai' });
    await record(batchId(), { workspaceId: elsewhere.workspaceId, integrationSlug: 'filter-a' });

    const list = async (query: string) => {
      const res = await h.request('GET', `/v2/batches?${query}`, { key: h.workspaceKey });
      assert.equal(res.status, 200, res.text);
      return res.body as { object: string; total: number; has_more: boolean; data: Array<{ id: string }> };
    };
    const byIntegration = await list('integration=filter-a');
    assert.deepEqual(
      byIntegration.data.map((b) => b.id),
      [ids[1], ids[0]],
    );
    assert.equal(byIntegration.total, 2);
    assert.deepEqual(
      (await list('provider=@filter-a&status=completed')).data.map((b) => b.id),
      [ids[0]],
    );
    assert.deepEqual(
      (await list('provider=azure-openai')).data.map((b) => b.id),
      [ids[2]],
    );
    const page = await list('integration=filter-a&page_size=1&current_page=1');
    assert.deepEqual(
      page.data.map((b) => b.id),
      [ids[0]],
    );
    assert.equal(page.has_more, false);
    const first = await list('integration=filter-a&page_size=1');
    assert.equal(first.has_more, true);

    // The other workspace sees only its own.
    const theirs = await h.request('GET', '/v2/batches?integration=filter-a', { key: elsewhere.key });
    assert.equal(theirs.status, 200);
    assert.equal(theirs.body.total, 1);
    assert.equal((await h.request('GET', '/v2/batches?page_size=0', { key: h.workspaceKey })).status, 400);
  });

  test('GET /:id shows one record; another workspace or organisation gets 404', async () => {
    const id = batchId();
    await record(id, { status: 'completed', outputFileId: 'file-out' });
    const res = await get(id);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      { ...res.body, created_at: undefined, last_updated_at: undefined },
      {
        object: 'batch_record',
        id,
        organisation_id: h.organisationId,
        workspace_id: h.workspaceId,
        api_key_id: 'key-1',
        provider: 'openai',
        integration_slug: 'openai-main',
        status: 'completed',
        endpoint: '/v1/chat/completions',
        input_file_id: 'file-in',
        output_file_id: 'file-out',
        error_file_id: null,
        internal_output_file_id: null,
        created_at: undefined,
        last_updated_at: undefined,
      },
    );
    for (const key of [elsewhere.key, other.workspaceKey]) {
      const hidden = await get(id, key);
      assert.equal(hidden.status, 404);
      assert.equal(hidden.body.error.code, 'batch_not_found');
    }
    assert.equal((await get('batch_missing')).status, 404);
  });

  test('PUT /:id sets and clears internal_output_file_id; the record’s other fields stay', async () => {
    const id = batchId();
    await record(id, { status: 'completed', outputFileId: 'file-out' });
    const set = await put(id, { internal_output_file_id: 'file-gateway-1' });
    assert.equal(set.status, 200, set.text);
    assert.equal(set.body.internal_output_file_id, 'file-gateway-1');
    assert.equal(set.body.output_file_id, 'file-out');
    assert.equal((await get(id)).body.internal_output_file_id, 'file-gateway-1');
    const { batch } = await h
      .client('batchRecords')
      .getBatch({ organisationId: h.organisationId, workspaceId: h.workspaceId, id });
    assert.equal(batch?.internalOutputFileId, 'file-gateway-1');

    const cleared = await put(id, { internal_output_file_id: null });
    assert.equal(cleared.status, 200);
    assert.equal(cleared.body.internal_output_file_id, null);
  });

  test('PUT refuses hostile or unknown input with a 400 and changes nothing; other tenants get 404', async () => {
    const id = batchId();
    await record(id);
    await put(id, { internal_output_file_id: 'file-kept' });
    for (const body of [
      {},
      { internal_output_file_id: 'file-x', status: 'completed' },
      { internal_output_file_id: '../etc/passwd' },
      { internal_output_file_id: 'a b' },
      { internal_output_file_id: 'x'.repeat(257) },
      { internal_output_file_id: '' },
      { internal_output_file_id: 42 },
      [],
      'file-x',
    ]) {
      const res = await put(id, body);
      assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
      assert.equal(typeof res.body.error.message, 'string');
      assert.equal(res.body.error.type, 'invalid_request_error');
    }
    assert.equal((await get(id)).body.internal_output_file_id, 'file-kept');
    for (const key of [elsewhere.key, other.workspaceKey]) {
      const res = await put(id, { internal_output_file_id: 'file-theirs' }, key);
      assert.equal(res.status, 404);
    }
    assert.equal((await get(id)).body.internal_output_file_id, 'file-kept');
  });

  test('an organisation admin key, which holds no data-plane scope, gets a 403', async () => {
    const id = batchId();
    await record(id);
    for (const res of [
      await h.request('GET', '/v2/batches', { key: h.adminKey }),
      await get(id, h.adminKey),
      await put(id, { internal_output_file_id: 'file-admin' }, h.adminKey),
    ]) {
      assert.equal(res.status, 403, res.text);
      assert.equal(res.body.error.type, 'permission_error');
    }
  });

  test('a workspace key without batches scopes is refused', async () => {
    const res = await h.request('POST', '/v2/api-keys/workspace/service', {
      key: h.adminKey,
      json: { name: 'no batches', workspace_id: h.workspaceId, scopes: ['completions.write'] },
    });
    assert.equal(res.status, 200, res.text);
    const key = res.body.key as string;
    const id = batchId();
    await record(id);
    assert.equal((await get(id, key)).status, 403);
    assert.equal((await put(id, { internal_output_file_id: 'file-x' }, key)).status, 403);
  });
});
