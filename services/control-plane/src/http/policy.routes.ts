import { camelKeys, listBody } from '@switchyard/core';
import { jsonBody } from '@switchyard/http';
import { requirePrincipal } from '@switchyard/access';
import { ScopedRouter } from '@switchyard/runtime';
import type { PolicyService } from '../domain/policy.service.ts';
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
  router.get(
    '/',
    {
      scope: 'rate_limits.list',
      summary: 'Lists the rate limit policies the key can see.',
      query: listRateLimitsQuery,
      page: true,
    },
    async (req, res, _next, input) => {
      const [found, total] = await policies.list(
        'rate_limit',
        requirePrincipal(req),
        camelKeys(input.query(req)),
        input.page(req),
      );
      res.json(listBody(found.map(presentRateLimit), total));
    },
  );
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
  router.delete(
    '/:id',
    { scope: 'rate_limits.delete', summary: 'Archives a rate limit policy.', query: 'none', body: 'none' },
    async (req, res) => {
      await policies.archive('rate_limit', requirePrincipal(req), req.params.id);
      res.json({});
    },
  );
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
  router.get(
    '/',
    {
      scope: 'usage_limits.list',
      summary: 'Lists the usage limit policies the key can see.',
      query: listUsageLimitsQuery,
      page: true,
    },
    async (req, res, _next, input) => {
      const [found, total] = await policies.list(
        'usage_limit',
        requirePrincipal(req),
        camelKeys(input.query(req)),
        input.page(req),
      );
      const now = new Date();
      res.json(
        listBody(
          found.map((policy) => presentUsageLimit(policy, now)),
          total,
        ),
      );
    },
  );
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
  router.delete(
    '/:id',
    { scope: 'usage_limits.delete', summary: 'Archives a usage limit policy.', query: 'none', body: 'none' },
    async (req, res) => {
      await policies.archive('usage_limit', requirePrincipal(req), req.params.id);
      res.json({});
    },
  );
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
