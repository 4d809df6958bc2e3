import {
  jsonBody,
  listBody,
  parseInput,
  parsePage,
  requirePrincipal,
  ScopedRouter,
} from '@switchyard/platform';
import type { ConfigService } from '../domain/config.service.ts';
import { parseSavedConfig } from '../domain/saved-config.ts';
import { presentConfig, presentConfigSummary, presentConfigVersion } from './config.presenters.ts';
import { createConfigBody, listConfigsQuery, updateConfigBody } from './config.schemas.ts';

/** `/configs`, mounted under both `/v2` and `/v1` behind API-key authentication. */
export function configRouter(configs: ConfigService, bodyLimit: string): ScopedRouter {
  const router = new ScopedRouter({ body: jsonBody(bodyLimit) });

  router.post('/', 'configs.create', async (req, res) => {
    const body = parseInput(createConfigBody, req.body);
    const { config, version } = await configs.create(requirePrincipal(req), {
      name: body.name,
      slug: body.slug,
      config: parseSavedConfig(body.config),
      workspaceId: body.workspace_id,
      isDefault: body.isDefault,
    });
    res.json({ success: true, data: { id: config.id, version_id: version.id, slug: config.slug } });
  });
  router.get('/', 'configs.list', async (req, res) => {
    const query = parseInput(listConfigsQuery, req.query, 'query');
    const [found, total] = await configs.list(
      requirePrincipal(req),
      parsePage(req.query),
      query.workspace_id,
    );
    res.json({ success: true, ...listBody(found.map(presentConfigSummary), total) });
  });
  router.get('/:slug', 'configs.read', async (req, res) => {
    res.json({
      success: true,
      data: presentConfig(await configs.get(requirePrincipal(req), req.params.slug)),
    });
  });
  router.put('/:slug', 'configs.update', async (req, res) => {
    const body = parseInput(updateConfigBody, req.body);
    const { version } = await configs.update(requirePrincipal(req), req.params.slug, {
      name: body.name,
      status: body.status,
      config: body.config === undefined ? undefined : parseSavedConfig(body.config),
    });
    res.json({ success: true, data: { version_id: version.id } });
  });
  router.delete('/:slug', 'configs.delete', async (req, res) => {
    await configs.archive(requirePrincipal(req), req.params.slug);
    res.json({});
  });
  router.get('/:slug/versions', 'configs.read', async (req, res) => {
    const { config, versions, total } = await configs.listVersions(
      requirePrincipal(req),
      req.params.slug,
      parsePage(req.query),
    );
    res.json(
      listBody(
        versions.map((version) => presentConfigVersion(config, version)),
        total,
      ),
    );
  });

  return router;
}
