import { camelKeys, listBody } from '@switchyard/core';
import { jsonBody } from '@switchyard/http';
import { requirePrincipal } from '@switchyard/access';
import { ScopedRouter } from '@switchyard/runtime';
import type { ConfigService } from '../domain/config.service.ts';
import { parseSavedConfig } from '../domain/saved-config.ts';
import { presentConfig, presentConfigSummary, presentConfigVersion } from './config.presenters.ts';
import { createConfigBody, listConfigsQuery, updateConfigBody } from '../domain/config.schemas.ts';

/** `/configs`, mounted under both `/v2` and `/v1` behind API-key authentication. */
export function configRouter(configs: ConfigService, bodyLimit: string): ScopedRouter {
  const router = new ScopedRouter({ body: jsonBody(bodyLimit) });

  router.post(
    '/',
    {
      scope: 'configs.create',
      summary: 'Saves a config (routing, fallbacks, retries, cache) under a slug.',
      query: 'none',
      body: createConfigBody,
    },
    async (req, res, _next, input) => {
      const body = input.body(req);
      const { config, version } = await configs.create(requirePrincipal(req), {
        ...camelKeys(body),
        config: parseSavedConfig(body.config),
      });
      res.json({ success: true, data: { id: config.id, version_id: version.id, slug: config.slug } });
    },
  );
  router.get(
    '/',
    {
      scope: 'configs.list',
      summary: 'Lists the saved configs the key can see.',
      query: listConfigsQuery,
      page: true,
    },
    async (req, res, _next, input) => {
      const query = input.query(req);
      const [found, total] = await configs.list(requirePrincipal(req), input.page(req), query.workspace_id);
      res.json({ success: true, ...listBody(found.map(presentConfigSummary), total) });
    },
  );
  router.get(
    '/:slug',
    {
      scope: 'configs.read',
      summary: 'One saved config, by slug or id.',
      query: 'none',
    },
    async (req, res) => {
      res.json({
        success: true,
        data: presentConfig(await configs.get(requirePrincipal(req), req.params.slug)),
      });
    },
  );
  router.put(
    '/:slug',
    {
      scope: 'configs.update',
      summary: "Changes a saved config's name or status, or saves a new version of it.",
      query: 'none',
      body: updateConfigBody,
    },
    async (req, res, _next, input) => {
      const body = input.body(req);
      const { version } = await configs.update(requirePrincipal(req), req.params.slug, {
        ...camelKeys(body),
        config: body.config === undefined ? undefined : parseSavedConfig(body.config),
      });
      res.json({ success: true, data: { version_id: version.id } });
    },
  );
  router.delete(
    '/:slug',
    { scope: 'configs.delete', summary: 'Archives a saved config.', query: 'none', body: 'none' },
    async (req, res) => {
      await configs.archive(requirePrincipal(req), req.params.slug);
      res.json({});
    },
  );
  router.get(
    '/:slug/versions',
    { scope: 'configs.read', summary: "A saved config's versions.", query: 'none', page: true },
    async (req, res, _next, input) => {
      const { config, versions, total } = await configs.listVersions(
        requirePrincipal(req),
        req.params.slug,
        input.page(req),
      );
      res.json(
        listBody(
          versions.map((version) => presentConfigVersion(config, version)),
          total,
        ),
      );
    },
  );

  return router;
}
