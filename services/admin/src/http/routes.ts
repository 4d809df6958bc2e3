import { Router } from 'express';
import {
  apiKeyAuthentication,
  jsonBody,
  listBody,
  organisationAdminOnly,
  parseInput,
  parsePage,
  requirePrincipal,
  type ApiKeyCache,
} from '@switchyard/platform';
import type { IntegrationService } from '../domain/integration.service.ts';
import type { OrganisationSettingsService } from '../domain/organisation-settings.service.ts';
import { presentIntegration, presentIntegrationDetail, presentOrganisationSettings } from './presenters.ts';
import { createIntegrationBody, slugParam, updateOrganisationSettingsBody } from './schemas.ts';

function integrationsRouter(integrations: IntegrationService): Router {
  const router = Router();
  router.post('/', organisationAdminOnly, async (req, res) => {
    const body = parseInput(createIntegrationBody, req.body);
    const integration = await integrations.create(requirePrincipal(req), {
      name: body.name,
      slug: body.slug,
      provider: body.ai_provider_id,
      key: body.key,
      description: body.description,
      workspaceId: body.workspace_id,
      configurations: body.configurations,
      pricingAdjustments: body.pricing_adjustments ?? null,
    });
    res.json({ id: integration.id, slug: integration.slug });
  });
  router.get('/', async (req, res) => {
    const [list, total] = await integrations.list(requirePrincipal(req), parsePage(req.query));
    res.json(listBody(list.map(presentIntegration), total));
  });
  router.get('/:slug', async (req, res) => {
    const integration = await integrations.get(
      requirePrincipal(req),
      parseInput(slugParam, req.params.slug, 'path'),
    );
    res.json(presentIntegrationDetail(integration, integrations.maskedKey(integration)));
  });
  router.delete('/:slug', organisationAdminOnly, async (req, res) => {
    await integrations.delete(requirePrincipal(req), parseInput(slugParam, req.params.slug, 'path'));
    res.json({});
  });
  return router;
}

function organisationSettingsRouter(settings: OrganisationSettingsService): Router {
  const router = Router();
  router.get('/', async (req, res) => {
    res.json(presentOrganisationSettings(await settings.show(requirePrincipal(req))));
  });
  router.put('/', async (req, res) => {
    const body = parseInput(updateOrganisationSettingsBody, req.body);
    const updated = await settings.update(requirePrincipal(req), {
      blockInlineConfig: body.block_inline_config,
    });
    res.json(presentOrganisationSettings(updated));
  });
  return router;
}

export interface AdminDomain {
  integrations: IntegrationService;
  organisationSettings: OrganisationSettingsService;
}

export function adminRouter(domain: AdminDomain, keys: ApiKeyCache, headerPrefix: string): Router {
  const router = Router();
  const authentication = apiKeyAuthentication({ cache: keys, headerPrefix });
  const authenticated = [authentication, jsonBody('1mb')];
  const integrationRoutes = integrationsRouter(domain.integrations);
  router.use('/admin/v2/integrations', ...authenticated, integrationRoutes);
  router.use('/v1/integrations', ...authenticated, integrationRoutes);
  router.use(
    '/v1/admin/organisation/settings',
    authentication,
    organisationAdminOnly,
    jsonBody('16kb'),
    organisationSettingsRouter(domain.organisationSettings),
  );
  return router;
}
