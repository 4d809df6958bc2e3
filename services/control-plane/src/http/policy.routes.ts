import { camelKeys, listBody } from '@switchyard/core';
import { jsonBody } from '@switchyard/http';
import { requirePrincipal } from '@switchyard/access';
import { ScopedRouter } from '@switchyard/runtime';
import type { PolicyService } from '../domain/policy.service.ts';
import type { PolicyKindName, PolicyKinds } from '../store/policy.repository.ts';
import {
  createRateLimitBody,
  createUsageLimitBody,
  getRateLimitQuery,
  getUsageLimitQuery,
  listEntitiesQuery,
  listRateLimitsQuery,
  listUsageLimitsQuery,
  updateRateLimitBody,
  updateUsageLimitBody,
} from '../domain/policy.schemas.ts';
import {
  presentEntity,
  presentKeyLimit,
  presentRateLimit,
  presentUsageLimit,
  presentUsageMap,
} from './policy.presenters.ts';

/** `/policies`, mounted under `/v2` behind API-key authentication. */
export function policyRouter(policies: PolicyService, bodyLimit: string): ScopedRouter {
  return new ScopedRouter()
    .mount('/rate-limits', rateLimitRouter(policies, bodyLimit))
    .mount('/usage-limits', usageLimitRouter(policies, bodyLimit))
    .get(
      '/usage',
      {
        scope: 'authenticated',
        summary: 'The rate and usage limits that apply to the calling key, and where it stands under each.',
        query: 'none',
      },
      async (req, res) => {
        const limits = await policies.keyUsage(requirePrincipal(req));
        res.json({ object: 'list', data: limits.map(presentKeyLimit) });
      },
    );
}

function rateLimitRouter(policies: PolicyService, bodyLimit: string): ScopedRouter {
  const router = new ScopedRouter({ body: jsonBody(bodyLimit) });
  router.post(
    '/',
    {
      scope: 'rate_limits.create',
      summary:
        'Creates a rate limit policy: requests or tokens per minute, hour or day for each counted entity.',
      query: 'none',
      body: createRateLimitBody,
    },
    async (req, res, _next, input) => {
      const created = await policies.createRateLimit(requirePrincipal(req), camelKeys(input.body(req)));
      res.json({ id: created.id, object: 'policy_rate_limits' });
    },
  );
  listRoute(router, policies, 'rate_limit', listRateLimitsQuery, presentRateLimit);
  router.get(
    '/:id',
    { scope: 'rate_limits.read', summary: 'One rate limit policy.', query: getRateLimitQuery },
    async (req, res, _next, input) => {
      const { status } = input.query(req);
      res.json(
        presentRateLimit(await policies.get('rate_limit', requirePrincipal(req), req.params.id, status)),
      );
    },
  );
  router.put(
    '/:id',
    {
      scope: 'rate_limits.update',
      summary: "Changes a rate limit policy's name, description, conditions, unit or value.",
      query: 'none',
      body: updateRateLimitBody,
    },
    async (req, res, _next, input) => {
      const updated = await policies.updateRateLimit(
        requirePrincipal(req),
        req.params.id,
        camelKeys(input.body(req)),
      );
      res.json(presentRateLimit(updated));
    },
  );
  archiveRoute(router, policies, 'rate_limit');
  return router;
}

function usageLimitRouter(policies: PolicyService, bodyLimit: string): ScopedRouter {
  const router = new ScopedRouter({ body: jsonBody(bodyLimit) });
  router.post(
    '/',
    {
      scope: 'usage_limits.create',
      summary:
        'Creates a usage limit policy: cost, tokens or requests per period (or ever) for each counted entity.',
      query: 'none',
      body: createUsageLimitBody,
    },
    async (req, res, _next, input) => {
      const created = await policies.createUsageLimit(requirePrincipal(req), camelKeys(input.body(req)));
      res.json({ id: created.id, object: 'policy_usage_limits' });
    },
  );
  listRoute(router, policies, 'usage_limit', listUsageLimitsQuery, presentUsageLimit);
  router.get(
    '/:id',
    {
      scope: 'usage_limits.read',
      summary: 'One usage limit policy; with include_usage=true, the usage of each entity it counts.',
      query: getUsageLimitQuery,
    },
    async (req, res, _next, input) => {
      const query = input.query(req);
      const found = await policies.get('usage_limit', requirePrincipal(req), req.params.id, query.status);
      const usage = query.include_usage ? presentUsageMap(await policies.usageOf(found)) : undefined;
      res.json({ ...presentUsageLimit(found), ...(usage ? { value_key_usage_map: usage } : {}) });
    },
  );
  router.put(
    '/:id',
    {
      scope: 'usage_limits.update',
      summary:
        "Changes a usage limit policy's name, description, conditions, limits or periods, or resets one value's usage.",
      query: 'none',
      body: updateUsageLimitBody,
    },
    async (req, res, _next, input) => {
      const updated = await policies.updateUsageLimit(
        requirePrincipal(req),
        req.params.id,
        camelKeys(input.body(req)),
      );
      res.json(presentUsageLimit(updated));
    },
  );
  archiveRoute(router, policies, 'usage_limit');
  router.get(
    '/:id/entities',
    {
      scope: 'usage_limits.read',
      summary: 'The entities a usage limit policy counts, with their usage in the current period.',
      query: listEntitiesQuery,
    },
    async (req, res, _next, input) => {
      const { entities, total } = await policies.listEntities(
        requirePrincipal(req),
        req.params.id,
        camelKeys(input.query(req)),
      );
      res.json(listBody(entities.map(presentEntity), total));
    },
  );
  router.put(
    '/:id/entities/:entityId/reset',
    {
      scope: 'usage_limits.update',
      summary: "Starts one entity's usage in the current period again from 0.",
      query: 'none',
      body: 'none',
    },
    async (req, res) => {
      await policies.resetEntity(requirePrincipal(req), req.params.id, req.params.entityId);
      res.json({});
    },
  );
  return router;
}

/** How each kind is named in its scopes and summaries. */
const KINDS = {
  rate_limit: { scopes: 'rate_limits', noun: 'rate limit' },
  usage_limit: { scopes: 'usage_limits', noun: 'usage limit' },
} as const;

/** `GET /`: the policies of one kind the key can see, each presented as of one instant. */
function listRoute<K extends PolicyKindName>(
  router: ScopedRouter,
  policies: PolicyService,
  kind: K,
  query: typeof listRateLimitsQuery | typeof listUsageLimitsQuery,
  present: (policy: PolicyKinds[K], now: Date) => object,
): void {
  const { scopes, noun } = KINDS[kind];
  router.get(
    '/',
    { scope: `${scopes}.list`, summary: `Lists the ${noun} policies the key can see.`, query, page: true },
    async (req, res, _next, input) => {
      const [found, total] = await policies.list(
        kind,
        requirePrincipal(req),
        camelKeys(input.query(req)),
        input.page(req),
      );
      const now = new Date();
      res.json(
        listBody(
          found.map((policy) => present(policy, now)),
          total,
        ),
      );
    },
  );
}

/** `DELETE /:id`: archives one policy of the kind. */
function archiveRoute(router: ScopedRouter, policies: PolicyService, kind: PolicyKindName): void {
  const { scopes, noun } = KINDS[kind];
  router.delete(
    '/:id',
    { scope: `${scopes}.delete`, summary: `Archives a ${noun} policy.`, query: 'none', body: 'none' },
    async (req, res) => {
      await policies.archive(kind, requirePrincipal(req), req.params.id);
      res.json({});
    },
  );
}
