import type { RequestHandler } from 'express';
import {
  jsonBody,
  listBody,
  parseInput,
  parsePage,
  requirePrincipal,
  ScopedRouter,
  type BodyLimits,
} from '@switchyard/platform';
import type { IntegrationService } from '../domain/integration.service.ts';
import type { OrganisationSettingsService } from '../domain/organisation-settings.service.ts';
import type { SsoService } from '../domain/sso.service.ts';
import type { SsoLoginService } from '../domain/sso-login.service.ts';
import { ssoLoginRouter } from './sso-login.routes.ts';
import type { ScimService } from '../domain/scim.service.ts';
import {
  presentEmailDomain,
  presentIntegration,
  presentIntegrationDetail,
  presentOrganisationSettings,
  presentSsoConnection,
} from './presenters.ts';
import {
  createEmailDomainBody,
  createIntegrationBody,
  slugParam,
  ssoClientId,
  updateIntegrationBody,
  updateOrganisationSettingsBody,
  upsertSsoConnectionBody,
} from './schemas.ts';
import { scimAdminRouter, scimProtocolRouter, scimTokenRouter } from './scim.routes.ts';

function integrationsRouter(integrations: IntegrationService, bodyLimit: string): ScopedRouter {
  const router = new ScopedRouter({ body: jsonBody(bodyLimit) });
  router.post('/', 'integrations.create', async (req, res) => {
    const body = parseInput(createIntegrationBody, req.body);
    const integration = await integrations.create(requirePrincipal(req), {
      name: body.name,
      slug: body.slug,
      provider: body.ai_provider_id,
      pluginProviderId: body.plugin_provider_id,
      credentials: body.credentials,
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
    res.json(
      presentIntegrationDetail(
        integration,
        integrations.maskedKey(integration),
        integrations.maskedCredentials(integration),
      ),
    );
  });
  router.put('/:slug', 'integrations.update', async (req, res) => {
    const slug = parseInput(slugParam, req.params.slug, 'path');
    const body = parseInput(updateIntegrationBody, req.body);
    const integration = await integrations.update(requirePrincipal(req), slug, {
      name: body.name,
      description: body.description,
      key: body.key,
      credentials: body.credentials,
    });
    res.json(
      presentIntegrationDetail(
        integration,
        integrations.maskedKey(integration),
        integrations.maskedCredentials(integration),
      ),
    );
  });
  router.delete('/:slug', 'integrations.delete', async (req, res) => {
    await integrations.delete(requirePrincipal(req), parseInput(slugParam, req.params.slug, 'path'));
    res.json({});
  });
  return router;
}

function organisationSettingsRouter(settings: OrganisationSettingsService, bodyLimit: string): ScopedRouter {
  const router = new ScopedRouter({ body: jsonBody(bodyLimit) });
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
      workspaceSecuritySettingsOverride: body.workspace_security_settings_override,
    });
    res.json(presentOrganisationSettings(updated));
  });
  return router;
}

/** OIDC connections, one per client_id. Bodies hold client secrets: never logged, masked in every answer. */
function ssoRouter(sso: SsoService, bodyLimit: string): ScopedRouter {
  const router = new ScopedRouter({ body: jsonBody(bodyLimit) });
  const present = (connection: Parameters<SsoService['maskedClientSecret']>[0]) =>
    presentSsoConnection(connection, sso.maskedClientSecret(connection));
  router.get('/', 'organisation_sso.read', async (req, res) => {
    const list = await sso.listConnections(requirePrincipal(req));
    res.json(listBody(list.map(present), list.length));
  });
  router.get('/:client_id', 'organisation_sso.read', async (req, res) => {
    const clientId = parseInput(ssoClientId, req.params.client_id, 'path', 'client_id');
    res.json(present(await sso.getConnection(requirePrincipal(req), clientId)));
  });
  router.put('/:client_id', 'organisation_sso.update', async (req, res) => {
    const clientId = parseInput(ssoClientId, req.params.client_id, 'path', 'client_id');
    const body = parseInput(upsertSsoConnectionBody, req.body);
    const { connection } = await sso.upsertConnection(requirePrincipal(req), clientId, {
      clientId: body.client_id,
      enabled: body.enabled,
      issuer: body.issuer,
      clientSecret: body.client_secret,
      tokenEndpointAuthMethod: body.token_endpoint_auth_method,
      jwks: body.jwks,
      privateKey: body.private_key,
      scopes: body.scopes,
      disableAutoProvisionUser: body.disable_auto_provision_user,
    });
    res.json(present(connection));
  });
  router.delete('/:client_id', 'organisation_sso.update', async (req, res) => {
    const clientId = parseInput(ssoClientId, req.params.client_id, 'path', 'client_id');
    await sso.deleteConnection(requirePrincipal(req), clientId);
    res.json({});
  });
  return router;
}

function emailDomainsRouter(sso: SsoService, bodyLimit: string): ScopedRouter {
  const router = new ScopedRouter({ body: jsonBody(bodyLimit) });
  router.get('/', 'organisation_email_domains.list', async (req, res) => {
    const list = await sso.listDomains(requirePrincipal(req));
    res.json(listBody(list.map(presentEmailDomain), list.length));
  });
  router.post('/', 'organisation_email_domains.create', async (req, res) => {
    const body = parseInput(createEmailDomainBody, req.body);
    const claim = await sso.addDomain(requirePrincipal(req), {
      domain: body.domain,
      allowSubdomains: body.allow_subdomains,
    });
    res.json(presentEmailDomain(claim));
  });
  router.delete('/:domain', 'organisation_email_domains.delete', async (req, res) => {
    await sso.deleteDomain(requirePrincipal(req), req.params.domain);
    res.json({});
  });
  return router;
}

export interface AdminDomain {
  integrations: IntegrationService;
  organisationSettings: OrganisationSettingsService;
  sso: SsoService;
  scim: ScimService;
  ssoLogin: { logins: SsoLoginService; callbackUrl: string | undefined };
}

export function adminRouter(
  domain: AdminDomain,
  authentication: RequestHandler,
  bodyLimits: BodyLimits,
): ScopedRouter {
  return (
    new ScopedRouter()
      .mount(
        ['/admin/v2/integrations', '/v1/integrations'],
        integrationsRouter(domain.integrations, bodyLimits.management),
        authentication,
      )
      .mount(
        '/v1/admin/organisation/settings',
        organisationSettingsRouter(domain.organisationSettings, bodyLimits.management),
        authentication,
      )
      .mount('/v1/admin/organisation/sso', ssoRouter(domain.sso, bodyLimits.management), authentication)
      .mount(
        '/v1/admin/organisation/email-domains',
        emailDomainsRouter(domain.sso, bodyLimits.management),
        authentication,
      )
      .mount(
        '/v1/admin/organisation/scim-token',
        scimTokenRouter(domain.scim, bodyLimits.management),
        authentication,
      )
      .mount('/v1/scim', scimAdminRouter(domain.scim, bodyLimits.management), authentication)
      // SCIM clients authenticate with the organisation's SCIM token, checked by the router itself.
      .mount('/scim', scimProtocolRouter(domain.scim, bodyLimits.scim))
      // The SSO login is public: the person has no credential until it ends.
      .mount('/v1/auth/sso', ssoLoginRouter(domain.ssoLogin.logins, domain.ssoLogin))
  );
}
