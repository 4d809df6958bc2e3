// Log exports against real PostgreSQL, through the routes over HTTP: drafts, denied fields,
// runs written to a local volume as JSON Lines, signed links, cancel, delete, who sees what,
// and runs that survive the process that held them.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { RequestHandler } from 'express';
import type { DataSource } from 'typeorm';
import type { Principal } from '@switchyard/access';
import { createLogger, createMetrics, SecretBox } from '@switchyard/core';
import { createHttpApp, listen } from '@switchyard/http';
import { describedOnly } from '@switchyard/runtime';
import { LocalExportFileStore } from '../files/local-store.ts';
import { exportLine } from '../http/presenters.ts';
import { logExportRouter } from '../http/routes.ts';
import type { RequestLog } from '../store/entities.ts';
import { FeedbackRepository } from '../store/feedback.repository.ts';
import { LogExportRepository } from '../store/log-export.repository.ts';
import { RequestLogPartitions } from '../store/request-log-partitions.ts';
import { RequestLogRepository } from '../store/request-log.repository.ts';
import { RequestLogSearch } from '../store/request-log.search.ts';
import { startContractDatabase } from '../testing/contract-database.ts';
import { ExportRunner } from './export-runner.ts';
import { exportFileKey, LogExportService } from './log-exports.ts';
import { storedRequestLog } from '../testing/request-logs.ts';

const organisationId = randomUUID();
const otherOrganisationId = randomUUID();
const ws1 = randomUUID();
const ws2 = randomUUID();
const alice = randomUUID();
const bob = randomUUID();

function key(
  kind: Principal['kind'],
  workspaceId: string | null,
  userId: string | null = null,
  org = organisationId,
): Principal {
  return {
    apiKeyId: randomUUID(),
    organisationId: org,
    workspaceId,
    workspaceSlug: null,
    kind,
    scopes: ['logs.export'],
    expiresAt: null,
    userId,
    name: 'exports test',
    organisationCreatedAt: null,
  };
}
const KEYS: Record<string, Principal> = {
  org: key('organisation_admin', null),
  ws1: key('workspace_service', ws1),
  ws2: key('workspace_service', ws2),
  alice: key('workspace_user', ws1, alice),
  bob: key('workspace_user', ws1, bob),
  other: key('organisation_admin', null, null, otherOrganisationId),
};

function log(at: string, overrides: Partial<RequestLog> = {}): RequestLog {
  return storedRequestLog({
    organisationId,
    workspaceId: ws1,
    createdAt: new Date(at),
    integrationSlug: 'openai-prod',
    requestBody: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
    responseBody: JSON.stringify({ choices: [{ message: { content: 'hello' } }] }),
    cost: 0.001,
    ...overrides,
  });
}

/** Workspace 1: twelve logs of 14 March 2026 (every hour from 01:00), two of them by Claude; workspace 2 and another organisation: one each. */
const WS1_LOGS = Array.from({ length: 12 }, (_, i) =>
  log(`2026-03-14T${String(i + 1).padStart(2, '0')}:00:00Z`, {
    metadata: { team: i % 2 === 0 ? 'search' : 'ads' },
    traceId: `trace-${i}`,
    ...(i >= 10
      ? {
          provider: 'anthropic',
          model: 'claude-sonnet-4',
          configSlug: 'claude-first',
          usage: {
            prompt_tokens: 300,
            completion_tokens: 200,
            total_tokens: 500,
            cached_tokens: 0,
            reasoning_tokens: 0,
          },
        }
      : {}),
  }),
);
const WS2_LOG = log('2026-03-14T06:30:00Z', { workspaceId: ws2 });
const OTHER_LOG = log('2026-03-14T06:30:00Z', {
  organisationId: otherOrganisationId,
  workspaceId: randomUUID(),
});
/** Newest first, as an export writes them. */
const NEWEST_FIRST = [...WS1_LOGS].reverse();
const DAY = { time_of_generation_min: '2026-03-14', time_of_generation_max: '2026-03-15T00:00:00Z' };

let ds: DataSource;
let dropDatabase: () => Promise<void>;
let directory: string;
let files: LocalExportFileStore;
let repo: LogExportRepository;
let search: RequestLogSearch;
let feedback: FeedbackRepository;
let runner: ExportRunner;
let url: string;
let close: () => Promise<void>;
/** The organisation's denied fields, as admin would answer them. */
let denied: string[] = [];
/** The clock of the service (links expire by it). */
let now = () => new Date();

/** Response bodies are whatever JSON the service sent; tests assert on their fields. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const quiet = createLogger('log-exports-contract', 'error');
quiet.silent = true;

function newRunner(options: Partial<ConstructorParameters<typeof ExportRunner>[0]> = {}) {
  return new ExportRunner({
    repo,
    search,
    feedback,
    files,
    line: exportLine,
    logger: quiet,
    pollMs: 3_600_000,
    ...options,
  });
}

before(async () => {
  const database = await startContractDatabase('log-exports-contract');
  ({ ds } = database);
  dropDatabase = () => database.close();
  await new RequestLogPartitions(ds.manager).create(new Date('2026-03-14T00:00:00Z'));
  await new RequestLogRepository(ds.manager).insertBatch([...WS1_LOGS, WS2_LOG, OTHER_LOG]);
  feedback = new FeedbackRepository(ds.manager);
  await feedback.upsertNewest({
    id: randomUUID(),
    organisationId,
    workspaceId: ws1,
    traceId: 'trace-11',
    value: 5,
    weight: 1,
    metadata: { source: 'thumbs' },
    version: 1,
    createdBy: alice,
    createdAt: new Date('2026-03-14T13:00:00Z'),
    updatedAt: new Date('2026-03-14T13:00:00Z'),
  });
  directory = await mkdtemp(join(tmpdir(), 'switchyard-exports-'));
  files = new LocalExportFileStore(directory);
  repo = new LogExportRepository(ds.manager);
  search = new RequestLogSearch(ds.manager);
  runner = newRunner();
  const exports = new LogExportService(repo, search, async () => denied, {
    files,
    box: new SecretBox(SecretBox.generateKey()),
    linkTtlSeconds: 600,
    workspaces: async (organisation, workspace) =>
      organisation === organisationId && (workspace === ws1 || workspace === ws2)
        ? { id: workspace, slug: workspace, organisationId, organisationCreatedAt: null, defaultConfig: null }
        : null,
    now: () => now(),
  });

  const authenticate: RequestHandler = (req, _res, next) => {
    const principal = KEYS[String(req.headers['x-key'] ?? 'org')];
    if (principal) req.principal = principal;
    next();
  };
  // The service's own HTTP app: its body parsing and one error shape.
  const app = createHttpApp({
    service: 'log-export',
    logger: quiet,
    metrics: createMetrics(),
    readiness: {},
    routers: [
      {
        router: logExportRouter(
          describedOnly('the logs API'),
          describedOnly('the audit log'),
          describedOnly('analytics'),
          exports,
          authenticate,
        ).router,
      },
    ],
  });
  const server = await listen(app, '127.0.0.1', 0);
  url = `http://127.0.0.1:${server.port}/v1/logs/exports`;
  close = () => server.close();
});

after(async () => {
  await close();
  await dropDatabase();
  await rm(directory, { recursive: true, force: true });
});

async function call(method: string, path: string, body?: unknown, as = 'org') {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { 'x-key': as, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : (JSON.parse(text) as Json) };
}

async function create(body: Record<string, unknown>, as = 'org'): Promise<{ id: string; total: number }> {
  const res = await call('POST', '', body, as);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body as { id: string; total: number };
}

/** Starts an export and lets the runner run it to its end. */
async function run(id: string, as = 'org') {
  const started = await call('POST', `/${id}/start`, undefined, as);
  assert.equal(started.status, 200, JSON.stringify(started.body));
  runner.kick();
  await runner.idle();
  return (await call('GET', `/${id}`, undefined, as)).body!;
}

async function download(id: string, as = 'org'): Promise<{ lines: Array<Json>; res: Response }> {
  const link = await call('GET', `/${id}/download`, undefined, as);
  assert.equal(link.status, 200, JSON.stringify(link.body));
  const res = await fetch(link.body!.signed_url);
  assert.equal(res.status, 200);
  const text = await res.text();
  return {
    lines: text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line)),
    res,
  };
}

describe('a draft', () => {
  test('is made with the filters and fields asked for, and counts the logs they match', async () => {
    const made = await create({
      workspace_id: ws1,
      filters: { ...DAY, ai_model: 'gpt-4o', metadata: { team: 'search' } },
      requested_data: ['id', 'ai_model', 'metadata'],
      description: 'search team, March',
    });
    assert.equal(made.total, 5);
    const shown = await call('GET', `/${made.id}`);
    assert.equal(shown.status, 200);
    assert.deepEqual(
      {
        object: shown.body!.object,
        status: shown.body!.status,
        workspace_id: shown.body!.workspace_id,
        organisation_id: shown.body!.organisation_id,
        filters: shown.body!.filters,
        requested_data: shown.body!.requested_data,
        description: shown.body!.description,
        progress: shown.body!.progress,
      },
      {
        object: 'export',
        status: 'draft',
        workspace_id: ws1,
        organisation_id: organisationId,
        filters: { ...DAY, ai_model: 'gpt-4o', metadata: { team: 'search' } },
        requested_data: ['id', 'ai_model', 'metadata'],
        description: 'search team, March',
        progress: { exported: 0, total: 5, percent: 0 },
      },
    );
  });

  test('filters by tokens, provider and model pairs, status, config and weighted feedback', async () => {
    const totals = async (filters: Record<string, unknown>) =>
      (await create({ filters: { ...DAY, ...filters }, requested_data: ['id'] })).total;
    assert.equal(await totals({}), 13);
    assert.equal(await totals({ total_units_min: 100 }), 2);
    assert.equal(await totals({ prompt_token_max: 10, completion_token_min: 5 }), 11);
    assert.equal(await totals({ ai_org_model: 'anthropic__claude-sonnet-4, openai__gpt-4' }), 2);
    assert.equal(await totals({ ai_org: ['anthropic'] }), 2);
    assert.equal(await totals({ configs: 'claude-first' }), 2);
    assert.equal(await totals({ status_code: 200 }), 13);
    assert.equal(await totals({ status_code: '4xx,5xx' }), 0);
    assert.equal(await totals({ weighted_feedback_min: 4 }), 1);
    assert.equal(await totals({ weighted_feedback_max: 4 }), 0);
    assert.equal(await totals({ virtual_keys: 'openai-prod' }), 13);
  });

  test('refuses bad filters and fields, naming them, and stores nothing', async () => {
    const before = (await call('GET', '')).body!.total as number;
    const cases: Array<[unknown, string]> = [
      [{ filters: { ...DAY, ai_modle: 'x' }, requested_data: ['id'] }, 'filters'],
      [{ filters: DAY, requested_data: ['id', 'password'] }, 'requested_data'],
      [{ filters: DAY, requested_data: [] }, 'requested_data'],
      [{ filters: DAY, requested_data: ['id', 'id'] }, 'requested_data'],
      [{ filters: { time_of_generation_min: 'yesterday' }, requested_data: ['id'] }, 'filters'],
      [{ filters: { cost_min: 2, cost_max: 1 }, requested_data: ['id'] }, 'filters'],
      [{ filters: { status_code: '2x' }, requested_data: ['id'] }, 'filters'],
      [{ filters: { ai_org_model: 'gpt-4o' }, requested_data: ['id'] }, 'filters'],
      [{ filters: DAY }, 'requested_data'],
      [{ filters: DAY, requested_data: ['id'], workspace_id: 'ws-1' }, 'workspace_id'],
      ['{"filters": ', ''],
      [[1, 2], ''],
    ];
    for (const [body, param] of cases) {
      const res = await call('POST', '', body);
      assert.equal(res.status, 400, `${JSON.stringify(body)} → ${JSON.stringify(res.body)}`);
      assert.equal(typeof res.body!.error.message, 'string');
      if (param) assert.match(JSON.stringify(res.body), new RegExp(param));
    }
    assert.equal((await call('GET', '')).body!.total, before);
  });

  test('refuses a field the organisation denies, naming it, on create, update and start', async () => {
    const made = await create({ filters: DAY, requested_data: ['id', 'request'] });
    denied = ['request', 'response'];
    try {
      const refused = await call('POST', '', { filters: DAY, requested_data: ['id', 'response', 'cost'] });
      assert.equal(refused.status, 422);
      assert.equal(refused.body!.error.code, 'export_field_denied');
      assert.match(refused.body!.error.message, /'response'/);
      const update = await call('PUT', `/${made.id}`, { requested_data: ['request'] });
      assert.equal(update.status, 422);
      assert.match(update.body!.error.message, /'request'/);
      const start = await call('POST', `/${made.id}/start`);
      assert.equal(start.status, 422);
      assert.equal((await call('GET', `/${made.id}`)).body!.status, 'draft');
      const restrictions = await call('GET', `/field-restrictions?workspace_id=${ws1}`);
      assert.deepEqual(restrictions.body!.denied_fields, ['request', 'response']);
      assert.equal(restrictions.body!.workspace_id, ws1);
      assert.ok(!restrictions.body!.allowed_fields.includes('request'));
      assert.ok(restrictions.body!.allowed_fields.includes('cost'));
    } finally {
      denied = [];
    }
  });

  test('field restrictions of another workspace are not found for a workspace key', async () => {
    assert.equal(
      (await call('GET', `/field-restrictions?workspace_id=${ws2}`, undefined, 'ws1')).status,
      404,
    );
    const own = await call('GET', '/field-restrictions', undefined, 'ws1');
    assert.equal(own.status, 200);
    assert.equal(own.body!.workspace_id, ws1);
    assert.deepEqual(own.body!.denied_fields, []);
  });
});

describe('a run', () => {
  test('writes the matching logs newest first as JSON Lines, with the fields asked for in their order', async () => {
    const fields = [
      'id',
      'created_at',
      'ai_org',
      'ai_model',
      'request',
      'response',
      'total_units',
      'cost',
      'metadata',
      'is_success',
      'mode',
      'feedback',
    ];
    const made = await create({ workspace_id: ws1, filters: DAY, requested_data: fields });
    assert.equal(made.total, 12);
    const done = await run(made.id);
    assert.equal(done.status, 'success');
    assert.deepEqual(done.progress, { exported: 12, total: 12, percent: 100 });
    assert.ok(done.bytes > 0);
    const { lines, res } = await download(made.id);
    assert.equal(res.headers.get('content-type'), 'application/x-ndjson');
    assert.match(
      res.headers.get('content-disposition') ?? '',
      new RegExp(`attachment; filename="log-export-${made.id}.jsonl"`),
    );
    assert.deepEqual(
      lines.map((line) => line.id),
      NEWEST_FIRST.map((l) => l.id),
    );
    assert.deepEqual(Object.keys(lines[0]!), fields);
    const newest = lines[0]!;
    assert.equal(newest.ai_org, 'anthropic');
    assert.equal(newest.total_units, 500);
    assert.deepEqual(newest.request, {
      method: 'POST',
      path: '/v1/chat/completions',
      body: JSON.parse(WS1_LOGS[11]!.requestBody),
    });
    assert.deepEqual(
      newest.feedback.map((f: { value: number }) => f.value),
      [5],
    );
    assert.equal(lines[1]!.feedback.length, 0);
    assert.equal(newest.is_success, true);
    assert.equal(newest.mode, 'sync');
  });

  test('an organisation export without a workspace holds every workspace of the organisation, and no other', async () => {
    const made = await create({ filters: DAY, requested_data: ['id', 'workspace_id'] });
    await run(made.id);
    const { lines } = await download(made.id);
    const ids = new Set(lines.map((line) => line.id));
    assert.equal(ids.size, 13);
    assert.ok(ids.has(WS2_LOG.id));
    assert.ok(!ids.has(OTHER_LOG.id));
  });

  test('a link that was altered, has expired, or is of an earlier run downloads nothing', async () => {
    const made = await create({
      workspace_id: ws1,
      filters: { ...DAY, total_units_min: 100 },
      requested_data: ['id'],
    });
    await run(made.id);
    const link = (await call('GET', `/${made.id}/download`)).body!;
    assert.ok(Date.parse(link.expires_at) > Date.now());
    const tampered = link.signed_url.replace(
      /token=(\d+)/,
      (_: string, run: string) => `token=${Number(run) + 1}`,
    );
    for (const bad of [
      tampered,
      link.signed_url.replace(/token=[^&]+/, 'token=x'),
      link.signed_url.replace(made.id, randomUUID()),
    ]) {
      const res = await fetch(bad);
      assert.equal(res.status, 404, bad);
      assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'export_link_invalid');
    }
    // Expired: the service's clock moves past the link's end.
    now = () => new Date(Date.now() + 601_000);
    try {
      assert.equal((await fetch(link.signed_url)).status, 404);
    } finally {
      now = () => new Date();
    }
    await run(made.id);
    assert.equal((await fetch(link.signed_url)).status, 404, 'a link of the earlier run');
    assert.equal((await download(made.id)).lines.length, 2);
  });

  test('download before the export finished is refused with 409', async () => {
    const made = await create({ filters: DAY, requested_data: ['id'] });
    const res = await call('GET', `/${made.id}/download`);
    assert.equal(res.status, 409);
    assert.equal(res.body!.error.code, 'export_not_ready');
  });
});

describe('running, cancelled and deleted', () => {
  /** A runner whose reads wait at the second batch until let go. */
  function gatedRunner() {
    let letGo!: () => void;
    const gate = new Promise<void>((resolve) => (letGo = resolve));
    let reachedGate!: () => void;
    const atGate = new Promise<void>((resolve) => (reachedGate = resolve));
    let reads = 0;
    const gated = newRunner({
      batchSize: 3,
      search: {
        pageWithBodies: async (...args: Parameters<RequestLogSearch['pageWithBodies']>) => {
          if (++reads === 2) {
            reachedGate();
            await gate;
          }
          return search.pageWithBodies(...args);
        },
      },
    });
    return { gated, letGo, atGate };
  }

  test('a running export refuses start, change and delete (cancel first), is cancelled, then deleted and hidden', async () => {
    const made = await create({ workspace_id: ws1, filters: DAY, requested_data: ['id'] });
    assert.equal((await call('POST', `/${made.id}/cancel`)).status, 409, 'a draft is not running');
    const { gated, letGo, atGate } = gatedRunner();
    assert.equal((await call('POST', `/${made.id}/start`)).status, 200);
    gated.kick();
    await atGate;
    const running = (await call('GET', `/${made.id}`)).body!;
    assert.equal(running.status, 'in_progress');
    assert.deepEqual(running.progress, { exported: 3, total: 12, percent: 25 });

    const again = await call('POST', `/${made.id}/start`);
    assert.equal(again.status, 409);
    assert.equal(again.body!.error.code, 'export_in_progress');
    assert.equal((await call('PUT', `/${made.id}`, { description: 'x' })).status, 409);
    const del = await call('DELETE', `/${made.id}`);
    assert.equal(del.status, 409);
    assert.match(del.body!.error.message, /cancel it first/);
    assert.equal((await call('GET', `/${made.id}`)).body!.status, 'in_progress');

    const cancelled = await call('POST', `/${made.id}/cancel`);
    assert.deepEqual(cancelled.body, { message: 'Export cancelled', object: 'export' });
    letGo();
    await gated.idle();
    const stopped = (await call('GET', `/${made.id}`)).body!;
    assert.equal(stopped.status, 'stopped');
    assert.equal(
      await files.open(exportFileKey({ organisationId, id: made.id })),
      null,
      'no file of a cancelled run',
    );

    assert.deepEqual((await call('DELETE', `/${made.id}`)).body, {});
    assert.equal((await call('GET', `/${made.id}`)).status, 404);
    assert.equal((await call('DELETE', `/${made.id}`)).status, 404);
    const listed = (await call('GET', '')).body!.data as Array<{ id: string }>;
    assert.ok(!listed.some((e) => e.id === made.id));
  });

  test('deleting a finished export removes its file', async () => {
    const made = await create({ workspace_id: ws1, filters: DAY, requested_data: ['id'] });
    await run(made.id);
    const fileKey = exportFileKey({ organisationId, id: made.id });
    assert.notEqual(
      await files.open(fileKey).then((f) => {
        f?.stream.destroy();
        return f;
      }),
      null,
    );
    assert.deepEqual((await call('DELETE', `/${made.id}`)).body, {});
    assert.equal(await files.open(fileKey), null);
  });

  test('a change makes a finished export a draft again, with the new total', async () => {
    const made = await create({ workspace_id: ws1, filters: DAY, requested_data: ['id'] });
    await run(made.id);
    const changed = await call('PUT', `/${made.id}`, {
      filters: { ...DAY, ai_org: 'anthropic' },
      description: 'claude only',
    });
    assert.deepEqual(changed.body, { id: made.id, total: 2, object: 'export' });
    const shown = (await call('GET', `/${made.id}`)).body!;
    assert.equal(shown.status, 'draft');
    assert.equal(shown.description, 'claude only');
    assert.deepEqual(shown.filters, { ...DAY, ai_org: 'anthropic' });
    assert.equal((await call('GET', `/${made.id}/download`)).status, 409);
    const moved = await call('PUT', `/${made.id}`, { workspace_id: ws2 });
    assert.equal(moved.status, 422);
  });

  test('a process that stops hands its export over, and another finishes it', async () => {
    const made = await create({ workspace_id: ws1, filters: DAY, requested_data: ['id'] });
    const { gated, letGo, atGate } = gatedRunner();
    await call('POST', `/${made.id}/start`);
    gated.kick();
    await atGate;
    const stopping = gated.stop();
    letGo();
    await stopping;
    assert.equal((await call('GET', `/${made.id}`)).body!.status, 'in_progress');
    runner.kick();
    await runner.idle();
    const done = (await call('GET', `/${made.id}`)).body!;
    assert.equal(done.status, 'success');
    assert.equal((await download(made.id)).lines.length, 12);
  });

  test('an export whose process died is taken over when its hold runs out, and the dead one can no longer write', async () => {
    const made = await create({ workspace_id: ws1, filters: DAY, requested_data: ['id'] });
    await call('POST', `/${made.id}/start`);
    // A process took it, wrote a little, and died: its hold ran out at once.
    const dead = await repo.claim('dead-process', 0);
    assert.equal(dead?.id, made.id);
    assert.equal(await repo.progress({ id: made.id, run: dead.run, runner: 'dead-process' }, 3, 0), true);
    runner.kick();
    await runner.idle();
    assert.equal((await call('GET', `/${made.id}`)).body!.status, 'success');
    assert.equal(
      await repo.progress({ id: made.id, run: dead.run, runner: 'dead-process' }, 6, 60_000),
      false,
    );
    assert.equal(
      await repo.succeed(
        { id: made.id, run: dead.run, runner: 'dead-process' },
        { exported: 1, bytes: 1, fileKey: 'x' },
      ),
      false,
    );
    assert.equal((await download(made.id)).lines.length, 12);
  });

  test('an export that is held and within its lease is not taken by another process', async () => {
    const made = await create({
      workspace_id: ws1,
      filters: { ...DAY, ai_org: 'anthropic' },
      requested_data: ['id'],
    });
    await call('POST', `/${made.id}/start`);
    assert.equal((await repo.claim('busy-process', 60_000))?.id, made.id);
    assert.equal(await repo.claim('another-process', 60_000), null);
    await repo.release('busy-process');
    runner.kick();
    await runner.idle();
    assert.equal((await call('GET', `/${made.id}`)).body!.status, 'success');
  });
});

describe('who sees which exports', () => {
  test("a user's key sees only its own; a workspace key its workspace's; the organisation key all; another organisation none", async () => {
    const byAlice = await create({ filters: DAY, requested_data: ['id'] }, 'alice');
    const byBob = await create({ filters: DAY, requested_data: ['id'] }, 'bob');
    const ofWs2 = await create({ workspace_id: ws2, filters: DAY, requested_data: ['id'] });
    const ids = async (as: string, query = '') =>
      ((await call('GET', `${query}`, undefined, as)).body!.data as Array<{ id: string }>).map((e) => e.id);

    const alices = await ids('alice');
    assert.ok(alices.includes(byAlice.id));
    assert.ok(!alices.includes(byBob.id));
    assert.ok(!alices.includes(ofWs2.id));
    assert.equal((await call('GET', `/${byBob.id}`, undefined, 'alice')).status, 404);
    assert.equal((await call('POST', `/${byBob.id}/start`, undefined, 'alice')).status, 404);
    assert.equal((await call('DELETE', `/${byBob.id}`, undefined, 'alice')).status, 404);
    assert.equal((await call('GET', `/${byAlice.id}`, undefined, 'alice')).body!.created_by, alice);

    const ws1s = await ids('ws1');
    assert.ok(ws1s.includes(byAlice.id) && ws1s.includes(byBob.id));
    assert.ok(!ws1s.includes(ofWs2.id));
    assert.equal((await call('GET', `/${ofWs2.id}`, undefined, 'ws1')).status, 404);
    assert.deepEqual(await ids('ws1', `?workspace_id=${ws2}`), []);

    const all = await ids('org');
    assert.ok([byAlice.id, byBob.id, ofWs2.id].every((id) => all.includes(id)));
    assert.deepEqual(await ids('org', `?workspace_id=${ws2}`), [ofWs2.id]);

    assert.deepEqual(await ids('other'), []);
    assert.equal((await call('GET', `/${byAlice.id}`, undefined, 'other')).status, 404);
    assert.equal(
      (await call('POST', '', { workspace_id: ws1, filters: DAY, requested_data: ['id'] }, 'other')).status,
      404,
    );
  });

  test("a workspace key's export is of its own workspace; naming another is not found", async () => {
    const res = await call('POST', '', { workspace_id: ws2, filters: DAY, requested_data: ['id'] }, 'ws1');
    assert.equal(res.status, 404);
    const own = await create({ filters: DAY, requested_data: ['id'] }, 'ws1');
    assert.equal(own.total, 12);
  });

  test('the list is paged, newest first', async () => {
    const first = await call('GET', '?page_size=2&current_page=0');
    const second = await call('GET', '?page_size=2&current_page=1');
    assert.equal(first.body!.object, 'list');
    assert.equal(first.body!.data.length, 2);
    assert.equal(first.body!.total, second.body!.total);
    assert.ok(first.body!.data[1].created_at >= second.body!.data[0].created_at);
    assert.equal((await call('GET', '?page_size=0')).status, 400);
  });
});
