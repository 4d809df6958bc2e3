import type { RequestHandler } from 'express';
import {
  jsonBody,
  listBody,
  parseInput,
  parsePage,
  requirePrincipal,
  ScopedRouter,
} from '@switchyard/platform';
import type { IntegrationService } from '../domain/integration.service.ts';
import type { OrganisationSettingsService } from '../domain/organisation-settings.service.ts';
import { presentIntegration, presentIntegrationDetail, presentOrganisationSettings } from './presenters.ts';
import { createIntegrationBody, slugParam, updateOrganisationSettingsBody } from './schemas.ts';

function integrationsRouter(integrations: IntegrationService): ScopedRouter {
  const router = new ScopedRouter({ body: jsonBody('1mb') });
  router.post('/', 'integrations.create', async (req, res) => {
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
  router.get('/', 'integrations.list', async (req, res) => {
    const [list, total] = await integrations.list(requirePrincipal(req), parsePage(req.query));
    res.json(listBody(list.map(presentIntegration), total));
  });
  router.get('/:slug', 'integrations.read', async (req, res) => {
    const integration = await integrations.get(
      requirePrincipal(req),
      parseInput(slugParam, req.params.slug, 'path'),
    );
    res.json(presentIntegrationDetail(integration, integrations.maskedKey(integration)));
  });
  router.delete('/:slug', 'integrations.delete', async (req, res) => {
    await integrations.delete(requirePrincipal(req), parseInput(slugParam, req.params.slug, 'path'));
    res.json({});
  });
  return router;
}

function organisationSettingsRouter(settings: OrganisationSettingsService): ScopedRouter {
  const router = new ScopedRouter({ body: jsonBody('16kb') });
  router.get('/', 'organisation_settings.read', async (req, res) => {
    res.json(presentOrganisationSettings(await settings.show(requirePrincipal(req))));
  });
  router.put('/', 'organisation_settings.update', async (req, res) => {
    const body = parseInput(updateOrganisationSettingsBody, req.body);
    const updated = await settings.update(requirePrincipal(req), {
      blockInlineConfig: body.block_inline_config,
      userApiKeyAutoCreate: body.user_api_key_auto_create,
      defaultWorkspaceUserApiKeyAutoCreate: body.default_workspace_user_api_key_auto_create,
      userApiKeyAutoCreateScopes: body.user_api_key_auto_create_scopes,
      userApiKeyRotationPeriod: body.user_api_key_rotation_period,
    });
    res.json(presentOrganisationSettings(updated));
  });
  return router;
}

export interface AdminDomain {
  integrations: IntegrationService;
  organisationSettings: OrganisationSettingsService;
}

export function adminRouter(domain: AdminDomain, authentication: RequestHandler): ScopedRouter {
  return new ScopedRouter()
    .mount(
      ['/admin/v2/integrations', '/v1/integrations'],
      integrationsRouter(domain.integrations),
      authentication,
    )
    .mount(
      '/v1/admin/organisation/settings',
      organisationSettingsRouter(domain.organisationSettings),
      authentication,
    );
}
