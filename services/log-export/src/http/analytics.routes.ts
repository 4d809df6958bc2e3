import { requirePrincipal, type Principal } from '@switchyard/access';
import type { PageQuery } from '@switchyard/core';
import { ScopedRouter } from '@switchyard/runtime';
import { z } from 'zod';
import type { AnalyticsService } from '../domain/analytics.ts';
import {
  analyticsFeedbackQuery,
  analyticsGroupsQuery,
  analyticsQuery,
  graphResponse,
  latencyPoint,
  metadataKeyParams,
  totalAvgPoint,
  totalPoint,
  type AnalyticsQuery,
  type AnalyticsRangeQuery,
} from '../domain/analytics.schemas.ts';

/**
 * Reading analytics is reading the logs they sum up: the scope of listing logs. A workspace
 * key reads its own workspace.
 */
const SCOPE = 'logs.list';

const RANGE =
  'The range is time_of_generation_min (included) to time_of_generation_max (not): the last 7 days unless given, ' +
  'at most 90 days. Data points are hours for a range up to 3 days, UTC days beyond; each starts at its timestamp, ' +
  'and an empty one is answered as zeros. Costs are in cents.';

type Run<Q> = (principal: Principal, query: Q) => Promise<unknown>;

/**
 * `/v2/analytics` (mounted behind authentication): graphs of requests, cost, latency, tokens,
 * users, errors, cache and feedback over time, groups of requests, and the cache summary.
 */
export function analyticsRouter(service: AnalyticsService): ScopedRouter {
  const router = new ScopedRouter();

  const graph = (path: string, summary: string, run: Run<AnalyticsQuery>, response?: z.ZodType) =>
    router.get(
      path,
      { scope: SCOPE, summary, description: RANGE, query: analyticsQuery, response },
      async (req, res, _next, input) => {
        res.json(await run(requirePrincipal(req), input.query(req)));
      },
    );
  const feedbackGraph = (path: string, summary: string, run: Run<AnalyticsRangeQuery>) =>
    router.get(
      path,
      { scope: SCOPE, summary, description: RANGE, query: analyticsFeedbackQuery },
      async (req, res, _next, input) => {
        res.json(await run(requirePrincipal(req), input.query(req)));
      },
    );
  const group = (
    path: string,
    summary: string,
    run: (principal: Principal, query: AnalyticsQuery, page: PageQuery) => Promise<unknown>,
  ) =>
    router.get(
      path,
      { scope: SCOPE, summary, description: RANGE, query: analyticsGroupsQuery, page: true },
      async (req, res, _next, input) => {
        const { current_page: _page, page_size: _size, ...query } = input.query(req);
        res.json(await run(requirePrincipal(req), query, input.page(req)));
      },
    );

  graph(
    '/graphs/requests',
    'Requests per data point.',
    (p, q) => service.requests(p, q),
    graphResponse(z.object({ total: z.number() }), totalPoint),
  );
  graph(
    '/graphs/cost',
    'Cost in cents per data point, in all and per request.',
    (p, q) => service.cost(p, q),
    graphResponse(z.object({ total: z.number(), avg: z.number() }), totalAvgPoint),
  );
  graph(
    '/graphs/latency',
    'Latency in ms per data point: the average, and p50, p90 and p99 estimated from a fixed histogram.',
    (p, q) => service.latency(p, q),
    graphResponse(latencyPoint.omit({ timestamp: true }), latencyPoint),
  );
  graph(
    '/graphs/tokens',
    'Tokens per data point, in all and per request.',
    (p, q) => service.tokens(p, q),
    graphResponse(z.object({ total: z.number(), avg: z.number() }), totalAvgPoint),
  );
  graph(
    '/graphs/users',
    'Distinct users (the metadata key _user) per data point.',
    (p, q) => service.users(p, q),
    graphResponse(z.object({ total: z.number() }), totalPoint),
  );
  graph('/graphs/users/requests', 'Requests per user per data point.', (p, q) => service.userRequests(p, q));
  graph(
    '/graphs/errors',
    'Failed requests (status 400 and above) per data point.',
    (p, q) => service.errors(p, q),
    graphResponse(z.object({ total: z.number() }), totalPoint),
  );
  graph('/graphs/errors/rate', 'The percentage of requests that failed, per data point.', (p, q) =>
    service.errorRate(p, q),
  );
  graph('/graphs/errors/stacks', 'Failed requests per status, per data point.', (p, q) =>
    service.errorStacks(p, q),
  );
  graph('/graphs/errors/status-codes', 'Failed requests per status over the range, most first.', (p, q) =>
    service.errorStatusCodes(p, q),
  );
  graph(
    '/graphs/requests/rescued',
    'Requests that succeeded after retries, per number of retries and data point (fallback is not recorded: 0).',
    (p, q) => service.rescued(p, q),
  );
  graph(
    '/graphs/cache/hit-rate',
    'Cache hits, their rate among requests that looked in the cache, and what they saved, per data point.',
    (p, q) => service.cacheHitRate(p, q),
  );
  graph('/graphs/cache/latency', 'The average latency of cache hits per data point.', (p, q) =>
    service.cacheLatency(p, q),
  );
  feedbackGraph('/graphs/feedbacks', 'Feedback sent per data point.', (p, q) => service.feedbacks(p, q));
  feedbackGraph('/graphs/feedbacks/scores', 'Feedback sent in the range per value.', (p, q) =>
    service.feedbackScores(p, q),
  );
  feedbackGraph(
    '/graphs/feedbacks/weighted',
    'The average weighted feedback (value times weight) per data point.',
    (p, q) => service.feedbackWeighted(p, q),
  );
  feedbackGraph(
    '/graphs/feedbacks/ai-models',
    'Feedback per model of the requests of its trace id, with its average weighted value.',
    (p, q) => service.feedbackModels(p, q),
  );

  router.get(
    '/summary/cache',
    {
      scope: SCOPE,
      summary:
        'Cache hits, their average latency, all requests, and how much faster a hit was than a miss (%).',
      description: RANGE,
      query: analyticsQuery,
    },
    async (req, res, _next, input) => {
      res.json(await service.cacheSummary(requirePrincipal(req), input.query(req)));
    },
  );

  group(
    '/groups/users',
    'Requests and cost per user (the metadata key _user), most requests first.',
    (p, q, page) => service.userGroups(p, q, page),
  );
  group('/groups/ai-models', 'Requests and cost per model, most requests first.', (p, q, page) =>
    service.modelGroups(p, q, page),
  );
  group(
    '/groups/providers',
    'Requests, errors, cost, tokens and latency per provider, most requests first.',
    (p, q, page) => service.groupsBy(p, q, 'provider', page),
  );
  group(
    '/groups/api-keys',
    'Requests, errors, cost, tokens and latency per API key, most requests first.',
    (p, q, page) => service.groupsBy(p, q, 'api_key_id', page),
  );
  group(
    '/groups/workspaces',
    'Requests, errors, cost, tokens and latency per workspace, most requests first.',
    (p, q, page) => service.groupsBy(p, q, 'workspace_id', page),
  );
  router.get(
    '/groups/metadata/:metadataKey',
    {
      scope: SCOPE,
      summary:
        'Requests per value of a metadata key, most first: cost, average tokens, feedback on them, last seen.',
      description: RANGE,
      params: metadataKeyParams,
      query: analyticsGroupsQuery,
      page: true,
    },
    async (req, res, _next, input) => {
      const { current_page: _page, page_size: _size, ...query } = input.query(req);
      const key = input.param(req, 'metadataKey');
      res.json(await service.metadataGroups(requirePrincipal(req), query, key, input.page(req)));
    },
  );

  return router;
}
