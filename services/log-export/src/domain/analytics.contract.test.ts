// Analytics against real PostgreSQL: logs stored through the batch path, then graphs, groups
// and summaries as a caller sees them, over HTTP too. Times are fixed; the range is
// [time_of_generation_min, time_of_generation_max).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import express from 'express';
import type { DataSource } from 'typeorm';
import type { Principal } from '@switchyard/access';
import { toAppError } from '@switchyard/core';
import { ScopedRouter } from '@switchyard/runtime';
import { analyticsRouter } from '../http/analytics.routes.ts';
import { AnalyticsRepository } from '../store/analytics.repository.ts';
import type { RequestLog } from '../store/entities.ts';
import { FeedbackRepository } from '../store/feedback.repository.ts';
import { RequestLogPartitions } from '../store/request-log-partitions.ts';
import { RequestLogRepository } from '../store/request-log.repository.ts';
import { RollupMaterialiser } from '../store/rollups.ts';
import { startContractDatabase } from '../testing/contract-database.ts';
import { AnalyticsService, latencyQuantile } from './analytics.ts';
import { analyticsFeedbackQuery, analyticsQuery, type AnalyticsQuery } from './analytics.schemas.ts';
import { storedRequestLog } from '../testing/request-logs.ts';

const organisationId = randomUUID();
const otherOrganisationId = randomUUID();
const ws1 = randomUUID();
const ws2 = randomUUID();
const key1 = randomUUID();
const key2 = randomUUID();
const key3 = randomUUID();

function principal(workspaceId: string | null, organisation = organisationId): Principal {
  return {
    apiKeyId: randomUUID(),
    organisationId: organisation,
    workspaceId,
    workspaceSlug: workspaceId === ws1 ? 'ws-one' : null,
    kind: workspaceId ? 'workspace_service' : 'organisation_admin',
    scopes: ['logs.list'],
    expiresAt: null,
    userId: null,
    name: 'analytics test',
    organisationCreatedAt: null,
  };
}
const orgKey = principal(null);
const ws1Key = principal(ws1);

function log(at: string, overrides: Partial<RequestLog> = {}): RequestLog {
  return storedRequestLog({
    organisationId,
    workspaceId: ws1,
    apiKeyId: key1,
    createdAt: new Date(at),
    ...overrides,
  });
}

const claude = { provider: 'anthropic', model: 'claude-sonnet-4' };

/** Workspace 1 holds seven logs of 14 March 2026 (UTC), workspace 2 one, another organisation one. */
const LOGS = [
  log('2026-03-13T23:59:59.999Z', { model: 'gpt-4o-mini' }),
  log('2026-03-14T00:00:00.000Z', { model: 'gpt-4o-mini' }),
  log('2026-03-14T10:15:00Z', {
    latencyMs: 40,
    cost: 0.01,
    metadata: { _user: 'alice', team: 'search' },
    traceId: 'trace-search',
  }),
  log('2026-03-14T10:45:00Z', {
    latencyMs: 700,
    cost: 0.03,
    metadata: { _user: 'bob', team: 'search' },
    usage: {
      prompt_tokens: 100,
      completion_tokens: 50,
      total_tokens: 150,
      cached_tokens: 0,
      reasoning_tokens: 0,
    },
  }),
  log('2026-03-14T10:50:00Z', { status: 502, latencyMs: 90_000, metadata: { _user: 'alice' } }),
  log('2026-03-14T11:05:00Z', {
    ...claude,
    apiKeyId: key2,
    latencyMs: 120,
    cost: 0.02,
    cacheStatus: 'MISS',
    retryCount: 2,
    metadata: { team: 'ads' },
    traceId: 'trace-ads',
  }),
  log('2026-03-14T11:10:00Z', { ...claude, apiKeyId: key2, latencyMs: 5, cacheStatus: 'HIT' }),
  log('2026-03-14T11:20:00Z', { ...claude, apiKeyId: key2, status: 429, latencyMs: 10 }),
  log('2026-03-15T00:00:00.000Z', { model: 'gpt-4o-mini' }),
  log('2026-03-14T10:30:00Z', {
    workspaceId: ws2,
    apiKeyId: key3,
    cost: 0.5,
    metadata: { _user: 'carol', team: 'search' },
  }),
  log('2026-03-14T10:30:00Z', {
    organisationId: otherOrganisationId,
    workspaceId: randomUUID(),
    apiKeyId: randomUUID(),
    cost: 9,
    metadata: { _user: 'mallory', team: 'search' },
  }),
];

const DAY = {
  time_of_generation_min: '2026-03-14T00:00:00Z',
  time_of_generation_max: '2026-03-15T00:00:00Z',
};

/** The range alone, as the feedback routes parse it. */
const DAY_RANGE = () => analyticsFeedbackQuery.parse(DAY);

/** The query as the route parses it. */
const q = (query: Record<string, string> = {}): AnalyticsQuery => analyticsQuery.parse({ ...DAY, ...query });

let ds: DataSource;
let dropDatabase: () => Promise<void>;
let analytics: AnalyticsService;

before(async () => {
  const database = await startContractDatabase('analytics-contract');
  ({ ds } = database);
  dropDatabase = () => database.close();
  const partitions = new RequestLogPartitions(ds.manager);
  for (const day of ['2026-03-13', '2026-03-14', '2026-03-15'])
    await partitions.create(new Date(`${day}T00:00:00Z`));
  // Two batches, as the consumer stores them: rollup rows of one hour are summed across batches.
  const repo = new RequestLogRepository(ds.manager);
  await repo.insertBatch(LOGS.slice(0, 5));
  await repo.insertBatch(LOGS.slice(5));

  const feedback = new FeedbackRepository(ds.manager);
  const entry = (
    traceId: string,
    value: number,
    weight: number,
    at: string,
    workspaceId: string | null,
    org = organisationId,
  ) =>
    feedback.upsertNewest({
      id: randomUUID(),
      organisationId: org,
      workspaceId,
      traceId,
      value,
      weight,
      metadata: {},
      version: 1,
      createdBy: 'user',
      createdAt: new Date(at),
      updatedAt: new Date(at),
    });
  await entry('trace-search', 5, 1, '2026-03-14T10:20:00Z', ws1);
  await entry('trace-ads', -1, 2, '2026-03-14T11:30:00Z', ws1);
  await entry('trace-search', 3, 1, '2026-03-14T12:00:00Z', null);
  await entry('trace-elsewhere', 2, 1, '2026-03-14T12:00:00Z', ws2);
  await entry('trace-search', 7, 1, '2026-03-14T12:00:00Z', randomUUID(), otherOrganisationId);
  await entry('trace-search', 1, 1, '2026-03-15T00:00:00Z', ws1);

  analytics = new AnalyticsService(new AnalyticsRepository(ds.manager), {
    now: () => new Date('2026-03-15T00:00:00Z'),
    workspaces: async (organisation, workspace) =>
      organisation === organisationId && (workspace === 'ws-two' || workspace === ws2)
        ? { id: ws2, slug: 'ws-two', organisationId, organisationCreatedAt: null, defaultConfig: null }
        : null,
  });
});
after(async () => {
  if (ds?.isInitialized) await ds.destroy();
  await dropDatabase?.();
});

/** The data points that are not all zeros, as [hour or day, value]. */
function nonEmpty<P extends { timestamp: string }>(
  points: P[],
  value: (p: P) => unknown,
): Array<[string, unknown]> {
  return points
    .map((p): [string, unknown] => [p.timestamp, value(p)])
    .filter(([, v]) => v !== 0 && !(Array.isArray(v) && v.length === 0));
}

/** Every graph, group and summary, as a caller sees them. */
function analyticsSuites(): void {
  describe('graphs of requests', () => {
    test('requests are counted per hour, from time_of_generation_min included to time_of_generation_max not', async () => {
      const graph = await analytics.requests(orgKey, q());
      assert.equal(graph.object, 'analytics-graph');
      assert.equal(graph.data_points.length, 24);
      assert.equal(graph.data_points[0]!.timestamp, '2026-03-14T00:00:00.000Z');
      assert.deepEqual(graph.summary, { total: 8 });
      assert.deepEqual(
        nonEmpty(graph.data_points, (p) => p.total),
        [
          ['2026-03-14T00:00:00.000Z', 1],
          ['2026-03-14T10:00:00.000Z', 4],
          ['2026-03-14T11:00:00.000Z', 3],
        ],
      );
    });

    test('a workspace key counts its own workspace only; another organisation is never counted', async () => {
      assert.deepEqual((await analytics.requests(ws1Key, q())).summary, { total: 7 });
      assert.deepEqual((await analytics.requests(orgKey, q({ workspace_id: ws2 }))).summary, { total: 1 });
      assert.deepEqual((await analytics.requests(orgKey, q({ workspace_slug: 'ws-two' }))).summary, {
        total: 1,
      });
      // Naming its own workspace changes nothing; naming another is "not found".
      assert.deepEqual((await analytics.requests(ws1Key, q({ workspace_slug: 'ws-one' }))).summary, {
        total: 7,
      });
      await assert.rejects(analytics.requests(ws1Key, q({ workspace_id: ws2 })), { status: 404 });
      await assert.rejects(analytics.requests(ws1Key, q({ workspace_slug: 'ws-two' })), { status: 404 });
      const stranger = principal(null, otherOrganisationId);
      assert.deepEqual((await analytics.requests(stranger, q({ workspace_id: ws1 }))).summary, { total: 0 });
      assert.equal((await analytics.cost(stranger, q())).summary.total, 900);
    });

    test('a range not on whole hours counts exactly the requests inside it', async () => {
      // 09:30 to 11:15: the hour of 10:00 from the rollups, the half hour before and the quarter after from the logs.
      const graph = await analytics.requests(
        orgKey,
        q({ time_of_generation_min: '2026-03-14T09:30:00Z', time_of_generation_max: '2026-03-14T11:15:00Z' }),
      );
      assert.deepEqual(graph.summary, { total: 6 });
      assert.deepEqual(
        nonEmpty(graph.data_points, (p) => p.total),
        [
          ['2026-03-14T10:00:00.000Z', 4],
          ['2026-03-14T11:00:00.000Z', 2],
        ],
      );
      // 10:20 to 12:00: the part hour from the logs (10:30 and 10:45, 10:50; not 10:15), the hour of 11:00 from the rollups.
      const later = await analytics.requests(
        orgKey,
        q({ time_of_generation_min: '2026-03-14T10:20:00Z', time_of_generation_max: '2026-03-14T12:00:00Z' }),
      );
      assert.deepEqual(
        nonEmpty(later.data_points, (p) => p.total),
        [
          ['2026-03-14T10:00:00.000Z', 3],
          ['2026-03-14T11:00:00.000Z', 3],
        ],
      );
      const within = await analytics.requests(
        orgKey,
        q({ time_of_generation_min: '2026-03-14T10:30:00Z', time_of_generation_max: '2026-03-14T10:50:00Z' }),
      );
      assert.deepEqual(
        within.summary,
        { total: 2 },
        'the 10:30 logs of both workspaces, and 10:45; not 10:50',
      );
    });

    test('a range over 3 days is graphed per UTC day; without a range, the 7 days before now', async () => {
      const graph = await analytics.requests(
        orgKey,
        q({ time_of_generation_min: '2026-03-10T00:00:00Z', time_of_generation_max: '2026-03-20T00:00:00Z' }),
      );
      assert.equal(graph.data_points.length, 10);
      assert.deepEqual(
        nonEmpty(graph.data_points, (p) => p.total),
        [
          ['2026-03-13T00:00:00.000Z', 1],
          ['2026-03-14T00:00:00.000Z', 8],
          ['2026-03-15T00:00:00.000Z', 1],
        ],
      );
      const lastWeek = await analytics.requests(orgKey, analyticsQuery.parse({}));
      assert.deepEqual(lastWeek.summary, { total: 9 }, 'up to 2026-03-15T00:00Z, not included');
      assert.equal(lastWeek.data_points[0]!.timestamp, '2026-03-08T00:00:00.000Z');
      assert.equal(lastWeek.data_points.length, 7);
    });

    test('cost is answered in cents, in all and per request', async () => {
      const graph = await analytics.cost(ws1Key, q());
      assert.deepEqual(graph.summary, { total: 6, avg: 0.857143 });
      assert.deepEqual(
        nonEmpty(graph.data_points, (p) => [p.total, p.avg]).filter(([, v]) => (v as number[])[0] !== 0),
        [
          ['2026-03-14T10:00:00.000Z', [4, 1.333333]],
          ['2026-03-14T11:00:00.000Z', [2, 0.666667]],
        ],
      );
    });

    test('tokens, in all and per request', async () => {
      const graph = await analytics.tokens(ws1Key, q());
      assert.deepEqual(graph.summary, { total: 15 * 6 + 150, avg: Math.round(240 / 7) });
      assert.deepEqual(
        graph.data_points.find((p) => p.timestamp === '2026-03-14T10:00:00.000Z'),
        {
          timestamp: '2026-03-14T10:00:00.000Z',
          total: 180,
          avg: 60,
        },
      );
    });

    test('latency percentiles fall within the histogram bucket holding them', async () => {
      const graph = await analytics.latency(ws1Key, q());
      const ten = graph.data_points.find((p) => p.timestamp === '2026-03-14T10:00:00.000Z')!;
      // 40, 700 and 90 000 ms: the median is in the bucket 500 to 1 000 ms, p99 above the last bound.
      assert.equal(ten.avg, Math.round((40 + 700 + 90_000) / 3));
      assert.ok(ten.p50 > 500 && ten.p50 <= 1_000, `p50 ${ten.p50}`);
      assert.equal(ten.p99, 60_000);
      const eleven = graph.data_points.find((p) => p.timestamp === '2026-03-14T11:00:00.000Z')!;
      // 5, 10 and 120 ms.
      assert.ok(eleven.p50 >= 0 && eleven.p50 <= 50, `p50 ${eleven.p50}`);
      assert.ok(eleven.p99 > 100 && eleven.p99 <= 250, `p99 ${eleven.p99}`);
      assert.equal(graph.data_points.find((p) => p.timestamp === '2026-03-14T05:00:00.000Z')!.p50, 0);
    });

    test('errors, their rate, and their statuses', async () => {
      assert.deepEqual((await analytics.errors(ws1Key, q())).summary, { total: 2 });
      const rate = await analytics.errorRate(ws1Key, q());
      assert.deepEqual(rate.summary, { rate: 28.57 });
      assert.deepEqual(
        nonEmpty(rate.data_points, (p) => p.rate),
        [
          ['2026-03-14T10:00:00.000Z', 33.33],
          ['2026-03-14T11:00:00.000Z', 33.33],
        ],
      );
      const codes = await analytics.errorStatusCodes(ws1Key, q());
      assert.deepEqual(codes.summary, { total_errors: 2, unique_error_codes: 2 });
      assert.deepEqual(codes.data_points, [
        { status_code: 429, count: 1 },
        { status_code: 502, count: 1 },
      ]);
      const stacks = await analytics.errorStacks(ws1Key, q());
      assert.deepEqual(
        nonEmpty(stacks.data_points, (p) => p.stats),
        [
          ['2026-03-14T10:00:00.000Z', [{ response_status_code: 502, count: 1 }]],
          ['2026-03-14T11:00:00.000Z', [{ response_status_code: 429, count: 1 }]],
        ],
      );
    });

    test('cache hits, their rate among lookups, what they saved, and how much faster they were', async () => {
      const graph = await analytics.cacheHitRate(ws1Key, q());
      assert.deepEqual(graph.summary, { total: 1, rate: 50 });
      const at = (hour: string) =>
        graph.data_points.find((p) => p.timestamp === `2026-03-14T${hour}:00:00.000Z`)!;
      assert.deepEqual(at('11'), {
        timestamp: '2026-03-14T11:00:00.000Z',
        simple_hits: 1,
        semantic_hits: 0,
        rate: 50,
        // The hit would have cost what the model's paid request did: 2 cents.
        cumulative_simple_cache_savings: 2,
        cumulative_semantic_cache_savings: 0,
      });
      assert.equal(at('10').cumulative_simple_cache_savings, 0);
      assert.equal(at('23').cumulative_simple_cache_savings, 2, 'cumulative');
      assert.deepEqual((await analytics.cacheLatency(ws1Key, q())).summary, { avg: 5 });
      assert.deepEqual(await analytics.cacheSummary(ws1Key, q()), {
        object: 'analytics-summary',
        summary: { hits: 1, avg_latency: 5, total_requests: 7, cache_speedup: 96 },
      });
    });

    test('users are the metadata key _user; requests per user', async () => {
      const users = await analytics.users(orgKey, q());
      assert.deepEqual(users.summary, { total: 3 });
      assert.deepEqual(
        nonEmpty(users.data_points, (p) => p.total),
        [['2026-03-14T10:00:00.000Z', 3]],
      );
      const perUser = await analytics.userRequests(ws1Key, q());
      assert.deepEqual(perUser.summary, { total: 3, unique: 2, avg: 1.5 });
    });

    test('requests rescued by retries, per number of retries', async () => {
      const graph = await analytics.rescued(ws1Key, q());
      assert.deepEqual(graph.summary, { retry: 1, fallback: 0 });
      assert.deepEqual(
        nonEmpty(graph.data_points, (p) => p.retry),
        [['2026-03-14T11:00:00.000Z', [{ retry_success_count: 2, count: 1 }]]],
      );
    });

    test('filters the rollups hold, and those only the logs hold, narrow the count', async () => {
      const total = async (query: Record<string, string>) =>
        (await analytics.requests(ws1Key, q(query))).summary.total;
      assert.equal(await total({ status_code: '200' }), 5);
      assert.equal(await total({ status_code: '429,502' }), 2);
      assert.equal(await total({ provider: 'anthropic' }), 3);
      assert.equal(await total({ model: 'gpt-4o,gpt-4o-mini' }), 4);
      assert.equal(await total({ ai_org_model: 'openai__gpt-4o' }), 3);
      assert.equal(await total({ api_key_ids: key2 }), 3);
      assert.equal(await total({ cache_status: 'hit,miss' }), 2);
      assert.equal(await total({ metadata: '{"team":"search"}' }), 2);
      assert.equal(await total({ metadata: '{"team":"search","_user":"bob"}' }), 1);
      assert.equal(await total({ cost_min: '2' }), 2, 'in cents: the 2 and 3 cent requests');
      assert.equal(await total({ total_units_min: '100' }), 1);
      assert.equal(await total({ trace_id: 'trace-ads' }), 1);
      // The logs path answers what the rollups do for the same requests.
      const viaLogs = await analytics.latency(ws1Key, q({ total_units_min: '0' }));
      assert.deepEqual(viaLogs, await analytics.latency(ws1Key, q()));
    });
  });

  describe('groups', () => {
    test('models, most requests first, paged, with the number of groups', async () => {
      const first = await analytics.modelGroups(orgKey, q(), { page: 0, pageSize: 2, offset: 0, limit: 2 });
      assert.deepEqual(first, {
        object: 'list',
        total: 3,
        data: [
          { ai_model: 'gpt-4o', requests: '4', cost: '54', object: 'analytics-group' },
          { ai_model: 'claude-sonnet-4', requests: '3', cost: '2', object: 'analytics-group' },
        ],
      });
      const second = await analytics.modelGroups(orgKey, q(), { page: 1, pageSize: 2, offset: 2, limit: 2 });
      assert.deepEqual(
        second.data.map((g) => g.ai_model),
        ['gpt-4o-mini'],
      );
      const past = await analytics.modelGroups(orgKey, q(), { page: 5, pageSize: 2, offset: 10, limit: 2 });
      assert.deepEqual([past.data, past.total], [[], 3]);
    });

    test('workspaces, API keys and providers; a workspace key sees its own only', async () => {
      const page = { page: 0, pageSize: 100, offset: 0, limit: 100 };
      const workspaces = await analytics.groupsBy(orgKey, q(), 'workspace_id', page);
      assert.deepEqual(
        workspaces.data.map((g) => [g.workspace_id, g.requests, g.cost]),
        [
          [ws1, 7, 6],
          [ws2, 1, 50],
        ],
      );
      const own = await analytics.groupsBy(ws1Key, q(), 'workspace_id', page);
      assert.deepEqual(
        own.data.map((g) => g.workspace_id),
        [ws1],
      );
      const keys = await analytics.groupsBy(ws1Key, q(), 'api_key_id', page);
      assert.deepEqual(
        keys.data.map((g) => [g.api_key_id, g.requests, g.errors]),
        [
          [key1, 4, 1],
          [key2, 3, 1],
        ],
      );
      const providers = await analytics.groupsBy(ws1Key, q(), 'provider', page);
      assert.deepEqual(
        providers.data.map((g) => [g.provider, g.requests, g.avg_latency]),
        [
          ['openai', 4, Math.round((100 + 40 + 700 + 90_000) / 4)],
          ['anthropic', 3, 45],
        ],
      );
    });

    test('users, most requests first', async () => {
      const users = await analytics.userGroups(orgKey, q(), { page: 0, pageSize: 10, offset: 0, limit: 10 });
      assert.equal(users.total, 3);
      assert.deepEqual(
        users.data.map((g) => [g.user, g.requests, g.cost]),
        [
          ['alice', '2', '1'],
          ['bob', '1', '3'],
          ['carol', '1', '50'],
        ],
      );
    });

    test('a metadata key: requests per value, with the feedback sent on their traces', async () => {
      const groups = await analytics.metadataGroups(ws1Key, q(), 'team', {
        page: 0,
        pageSize: 10,
        offset: 0,
        limit: 10,
      });
      assert.equal(groups.total, 2);
      assert.deepEqual(groups.data, [
        {
          metadata_value: 'search',
          requests: 2,
          cost: 4,
          avg_tokens: Math.round((15 + 150) / 2),
          // Feedback is on the request whenever it was sent: 5, and 1 at midnight after the range.
          avg_weighted_feedback: 3,
          requests_with_feedback: 1,
          last_seen: '2026-03-14T10:45:00.000Z',
          object: 'analytics-group',
        },
        {
          metadata_value: 'ads',
          requests: 1,
          cost: 2,
          avg_tokens: 15,
          avg_weighted_feedback: -2,
          requests_with_feedback: 1,
          last_seen: '2026-03-14T11:05:00.000Z',
          object: 'analytics-group',
        },
      ]);
    });
  });

  describe('feedback graphs', () => {
    test("a workspace's feedback per hour, per value, weighted, and per model of its trace", async () => {
      const graph = await analytics.feedbacks(ws1Key, DAY_RANGE());
      assert.deepEqual(graph.summary, { total: 2 });
      assert.deepEqual(
        nonEmpty(graph.data_points, (p) => p.total),
        [
          ['2026-03-14T10:00:00.000Z', 1],
          ['2026-03-14T11:00:00.000Z', 1],
        ],
      );
      const scores = await analytics.feedbackScores(ws1Key, DAY_RANGE());
      assert.deepEqual(scores.data_points, [
        { score: -1, total: 1 },
        { score: 5, total: 1 },
      ]);
      assert.deepEqual((await analytics.feedbackWeighted(ws1Key, DAY_RANGE())).summary, { avg: 1.5 });
      assert.deepEqual((await analytics.feedbackModels(ws1Key, DAY_RANGE())).data_points, [
        { ai_model: 'claude-sonnet-4', total: 1, avg_weighted_feedback: -2 },
        { ai_model: 'gpt-4o', total: 1, avg_weighted_feedback: 5 },
      ]);
    });

    test("the organisation's view counts its own feedback and every workspace's, never another organisation's", async () => {
      assert.deepEqual((await analytics.feedbacks(orgKey, DAY_RANGE())).summary, { total: 4 });
    });
  });
}

// The same answers whichever way they are read: before any hour is rolled up (all from the
// logs), and once every hour is (whole days from the daily rollups, hours from the hourly ones,
// part hours at a range's ends from the logs).
describe('read from the logs, before the rollup job', analyticsSuites);
describe('read from the rollups, once the job has rolled up every hour', () => {
  before(async () => {
    const run = await new RollupMaterialiser(ds.manager).run(new Date('2026-03-16T00:05:00Z'));
    assert.ok(run.hours.length >= 48);
    for (const table of ['request_rollups', 'request_rollups_daily', 'metadata_rollups']) {
      const [{ n }] = await ds.query(`SELECT count(*)::int AS n FROM log_export.${table}`);
      assert.ok(n > 0, table);
    }
  });
  analyticsSuites();
});

test('percentiles are estimated within the bucket that holds them', () => {
  // One request in each of the first three buckets: up to 50, 50 to 100, 100 to 250 ms.
  assert.equal(latencyQuantile([1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0], 0.5), 75);
  assert.equal(latencyQuantile([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], 0.5), 0);
  assert.equal(latencyQuantile([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4], 0.5), 60_000);
});

describe('over HTTP', () => {
  let url: string;
  let close: () => Promise<void>;

  before(async () => {
    const root = new ScopedRouter();
    // The test's own authentication: the key is named by a header.
    const authenticate: express.RequestHandler = (req, _res, next) => {
      req.principal = req.headers['x-key'] === 'workspace' ? ws1Key : orgKey;
      next();
    };
    root.mount('/v2/analytics', analyticsRouter(analytics), authenticate);
    const app = express();
    app.set('query parser', 'simple');
    app.use(root.router);
    // The one error shape, as every service's HTTP app answers it.
    app.use(((err, _req, res, _next) => {
      const error = toAppError(err);
      res.status(error.status).json(error.toBody());
    }) as express.ErrorRequestHandler);
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}/v2/analytics`;
    close = () => new Promise((resolve) => server.close(() => resolve()));
  });
  after(() => close());

  const get = async (path: string, query: Record<string, string> = DAY, key = 'organisation') => {
    const res = await fetch(`${url}${path}?${new URLSearchParams(query)}`, { headers: { 'x-key': key } });
    return {
      status: res.status,
      body: (await res.json()) as Record<string, unknown> & { error?: { param: string } },
    };
  };

  test('a graph, a group page and the cache summary answer JSON', async () => {
    const graph = await get('/graphs/requests', DAY, 'workspace');
    assert.equal(graph.status, 200);
    assert.deepEqual(graph.body.summary, { total: 7 });
    const page = await get('/groups/ai-models', { ...DAY, page_size: '1', current_page: '1' });
    assert.equal(page.status, 200);
    assert.deepEqual(
      [page.body.total, (page.body.data as Array<{ ai_model: string }>).map((g) => g.ai_model)],
      [3, ['claude-sonnet-4']],
    );
    const metadata = await get('/groups/metadata/team', DAY, 'workspace');
    assert.equal(metadata.status, 200);
    assert.equal(metadata.body.total, 2);
    const cache = await get('/summary/cache', DAY, 'workspace');
    assert.deepEqual(cache.body.object, 'analytics-summary');
  });

  test('bad parameters are a 400 naming the parameter', async () => {
    const refused: Array<[string, Record<string, string>, string]> = [
      ['/graphs/requests', { time_of_generation_min: 'yesterday' }, 'time_of_generation_min'],
      [
        '/graphs/requests',
        { time_of_generation_min: '2026-03-15T00:00:00Z', time_of_generation_max: '2026-03-14T00:00:00Z' },
        'time_of_generation_max',
      ],
      [
        '/graphs/cost',
        { time_of_generation_min: '2025-12-01T00:00:00Z', time_of_generation_max: '2026-03-14T00:00:00Z' },
        'time_of_generation_min',
      ],
      ['/graphs/latency', { ...DAY, status_code: '2000' }, 'status_code[0]'],
      ['/graphs/errors', { ...DAY, api_key_ids: 'not-a-key' }, 'api_key_ids[0]'],
      ['/graphs/errors', { ...DAY, cache_status: 'sometimes' }, 'cache_status[0]'],
      ['/graphs/tokens', { ...DAY, metadata: '{"team":' }, 'metadata'],
      ['/graphs/tokens', { ...DAY, metadata: '{"team":1}' }, 'metadata.team'],
      ['/graphs/tokens', { ...DAY, virtual_keys: 'vk-1' }, 'virtual_keys'],
      ['/graphs/feedbacks', { ...DAY, model: 'gpt-4o' }, 'model'],
      ['/groups/users', { ...DAY, page_size: '0' }, 'page_size'],
      ['/groups/users', { ...DAY, workspace_id: ws1, workspace_slug: 'ws-one' }, 'workspace_slug'],
      ['/graphs/requests', { ...DAY, cost_min: '-1' }, 'cost_min'],
    ];
    for (const [path, query, param] of refused) {
      const res = await get(path, query);
      assert.equal(res.status, 400, `${path} ${JSON.stringify(query)}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error?.param, param, JSON.stringify(res.body));
    }
  });

  test("a workspace key naming another workspace is answered 'not found'", async () => {
    const res = await get('/graphs/requests', { ...DAY, workspace_id: ws2 }, 'workspace');
    assert.equal(res.status, 404);
  });
});
