import type { Request, RequestHandler } from 'express';
import { z } from 'zod';
import { BadRequest, camelKeys, listBody, type BodyLimits } from '@switchyard/core';
import { jsonBody } from '@switchyard/http';
import { requirePrincipal } from '@switchyard/access';
import { ScopedRouter, serveOpenApi } from '@switchyard/runtime';
import type { IntegrationService } from '../domain/integration.service.ts';
import type { OrganisationSettingsService } from '../domain/organisation-settings.service.ts';
import type { GuardrailDefaultsService } from '../domain/guardrail-defaults.service.ts';
import type { GuardrailPhase } from '../store/guardrail-defaults.repository.ts';
import type { SsoService } from '../domain/sso.service.ts';
import type { SsoLoginService } from '../domain/sso-login.service.ts';
import type { DeploymentService } from '../domain/deployment.service.ts';
import { ssoLoginRouter } from './sso-login.routes.ts';
import { deploymentsRouter } from './deployments.routes.ts';
import type { SecretReferenceService } from '../domain/secret-reference.service.ts';
import { secretReferencesRouter } from './secret-reference.routes.ts';
import { presentSecretMappings } from './secret-reference.presenters.ts';
import {
  presentEmailDomain,
  presentGuardrailDefaults,
  presentIntegration,
  presentIntegrationDetail,
  presentIntegrationModels,
  presentIntegrationWorkspaces,
  maskedConfigurations,
  presentModelPricing,
  presentOrganisationSettings,
  presentProviderDetail,
  presentSsoConnection,
} from './presenters.ts';
import {
  modelPricing,
  providerDetail,
  providerDetails,
  refuseIncludedConfigurations,
  type ProviderDetail,
} from '../domain/provider-details.ts';
import type { Integration } from '../store/entities.ts';
import { modelParam, providerDetailsQuery, providerIdParam } from '../domain/provider-details.schemas.ts';
import {
  createIntegrationBody,
  integrationSlug,
  setIntegrationModelsBody,
  updateIntegrationBody,
  updateIntegrationWorkspacesBody,
} from '../domain/integration.schemas.ts';
import { systemCallerOf, systemOrCallerAuthentication } from './system-auth.ts';
import { updateOrganisationSettingsBody } from '../domain/organisation-settings.schemas.ts';
import {
  updateGuardrailDefaultsBody,
  updateWorkspaceExclusionsBody,
} from '../domain/guardrail-defaults.schemas.ts';
import { createEmailDomainBody, ssoClientId, upsertSsoConnectionBody } from '../domain/sso.schemas.ts';
import { scimAdminRouter, scimProtocolRouter, scimTokenRouter, type ScimDomain } from './scim.routes.ts';

const integrationPath = z.object({ slug: integrationSlug });
const ssoConnectionPath = z.object({ client_id: ssoClientId });
const providerPath = z.object({ provider: providerIdParam });
const modelPricingPath = z.object({ provider: providerIdParam, model: modelParam });

function integrationsRouter(integrations: IntegrationService, bodyLimit: string): ScopedRouter {
  const router = new ScopedRouter({ body: jsonBody(bodyLimit) });
  router.post(
    '/',
    {
      scope: 'integrations.create',
      summary: "Connects a provider: an integration holding the provider's key or credentials, encrypted.",
      query: 'none',
      body: createIntegrationBody,
    },
    async (req, res, _next, input) => {
      const integration = await integrations.create(requirePrincipal(req), camelKeys(input.body(req)));
      res.json({ id: integration.id, slug: integration.slug });
    },
  );
  router.get(
    '/',
    {
      scope: 'integrations.list',
      summary: 'Lists the integrations the key can see.',
      query: 'none',
      page: true,
    },
    async (req, res, _next, input) => {
      const [list, total] = await integrations.list(requirePrincipal(req), input.page(req));
      res.json(listBody(list.map(presentIntegration), total));
    },
  );
  router.get(
    '/:slug',
    {
      scope: 'integrations.read',
      summary: 'One integration, its key and credentials masked.',
      params: integrationPath,
      query: 'none',
    },
    async (req, res, _next, input) => {
      const integration = await integrations.get(requirePrincipal(req), input.param(req, 'slug'));
      res.json({
        ...presentIntegrationDetail(
          integration,
          integrations.maskedKey(integration),
          integrations.maskedCredentials(integration),
        ),
        secret_mappings: presentSecretMappings(await integrations.secretMappings(integration)),
      });
    },
  );
  router.put(
    '/:slug',
    {
      scope: 'integrations.update',
      summary:
        "Changes an integration's name, description, settings or pricing adjustments, or replaces its key or credentials.",
      params: integrationPath,
      query: 'none',
      body: updateIntegrationBody,
    },
    async (req, res, _next, input) => {
      const slug = input.param(req, 'slug');
      const integration = await integrations.update(requirePrincipal(req), slug, camelKeys(input.body(req)));
      res.json({
        ...presentIntegrationDetail(
          integration,
          integrations.maskedKey(integration),
          integrations.maskedCredentials(integration),
        ),
        secret_mappings: presentSecretMappings(await integrations.secretMappings(integration)),
      });
    },
  );
  router.get(
    '/:slug/models',
    {
      scope: 'integrations.read',
      summary:
        "An integration's models: those its provider lists and those set on it, each with its settings and custom headers.",
      params: integrationPath,
      query: 'none',
    },
    async (req, res, _next, input) => {
      const models = await integrations.models(requirePrincipal(req), input.param(req, 'slug'));
      res.json(presentIntegrationModels(models));
    },
  );
  const setModels = setIntegrationModelsBody();
  for (const path of ['/:slug/models', '/:slug/integration-models']) {
    router.put(
      path,
      {
        scope: 'integrations.update',
        summary:
          'Replaces the models set on an integration: whether each is enabled, its configurations (custom_host) and custom_headers.',
        params: integrationPath,
        query: 'none',
        body: setModels,
      },
      async (req, res, _next, input) => {
        const slug = input.param(req, 'slug');
        const models = await integrations.setModels(requirePrincipal(req), slug, input.body(req));
        res.json(presentIntegrationModels(models));
      },
    );
  }
  router.get(
    '/:slug/workspaces',
    {
      scope: 'integration_workspaces.read',
      summary:
        'Which workspaces of the organisation may use an organisation-level integration: those with a setting of their own, and the default of the others.',
      params: integrationPath,
      query: 'none',
    },
    async (req, res, _next, input) => {
      const access = await integrations.workspaceAccess(requirePrincipal(req), input.param(req, 'slug'));
      res.json(presentIntegrationWorkspaces(access));
    },
  );
  router.put(
    '/:slug/workspaces',
    {
      scope: 'integrations.update',
      summary:
        'Grants or denies workspaces the use of an organisation-level integration, each by id or slug, and sets the default of the others (global_workspace_access).',
      description:
        'A workspace with no setting of its own follows global_workspace_access, on until changed. override_existing_workspace_access drops every setting of its own first. Usage and rate limits per workspace are not supported (501): set a policy with a workspace_id condition.',
      params: integrationPath,
      query: 'none',
      body: updateIntegrationWorkspacesBody,
    },
    async (req, res, _next, input) => {
      const slug = input.param(req, 'slug');
      const access = await integrations.setWorkspaceAccess(requirePrincipal(req), slug, input.body(req));
      res.json(presentIntegrationWorkspaces(access));
    },
  );
  router.delete(
    '/:slug',
    {
      scope: 'integrations.delete',
      summary: 'Deletes an integration.',
      params: integrationPath,
      query: 'none',
      body: 'none',
    },
    async (req, res, _next, input) => {
      await integrations.delete(requirePrincipal(req), input.param(req, 'slug'));
      res.json({});
    },
  );
  return router;
}

/**
 * The provider kinds integrations may name, from the provider registry. A service of this
 * deployment may read them with system authentication (see system-auth.ts), and only it may
 * ask for include_configurations=true.
 */
function providerDetailsRouter(integrations: IntegrationService): ScopedRouter {
  const router = new ScopedRouter();
  /** With include_configurations=true (system callers only): the organisation's integrations of each kind, secrets masked. */
  const includedIntegrations = async (
    req: Request,
    query: { include_configurations: boolean; organisation_id?: string | undefined },
  ) => {
    if (!query.include_configurations) return undefined;
    if (!systemCallerOf(req)) refuseIncludedConfigurations();
    if (query.organisation_id === undefined) {
      throw new BadRequest(
        'include_configurations=true needs organisation_id: the organisation whose integrations are included.',
        {
          param: 'organisation_id',
        },
      );
    }
    return integrations.ofOrganisation(query.organisation_id);
  };
  const withIntegrations = (detail: ProviderDetail, included: Integration[] | undefined) => ({
    ...presentProviderDetail(detail),
    ...(included
      ? {
          integrations: included
            .filter((integration) => integration.provider === detail.id)
            .map((integration) => ({
              ...presentIntegration(integration),
              configurations: maskedConfigurations(integration),
            })),
        }
      : {}),
  });
  router.get(
    '/',
    {
      scope: 'integrations.list',
      summary:
        'The provider kinds an integration may name: auth types, the configuration fields it takes and which are secret, the models with listed prices.',
      description:
        'include_configurations=true is for system authentication only (a service of this deployment: its name in x-switchyard-caller and, as bearer token, its system token derived from GRPC_AUTH_TOKEN) and is refused to every other caller. It adds to each kind the integrations of the organisation named by organisation_id, with their configurations: AWS, Azure Entra and OAuth secrets and header values masked.',
      query: providerDetailsQuery,
    },
    async (req, res, _next, input) => {
      const included = await includedIntegrations(req, input.query(req));
      const list = providerDetails().map((detail) => withIntegrations(detail, included));
      res.json(listBody(list, list.length));
    },
  );
  router.get(
    '/:provider',
    {
      scope: 'integrations.read',
      summary: 'One provider kind, by the id integrations name (ai_provider_id).',
      params: providerPath,
      query: providerDetailsQuery,
    },
    async (req, res, _next, input) => {
      const detail = providerDetail(input.param(req, 'provider'));
      res.json(withIntegrations(detail, await includedIntegrations(req, input.query(req))));
    },
  );
  return router;
}

/** The prices the gateway charges with, as its cost computation looks them up. Public list prices: no credential needed. */
function modelPricingRouter(): ScopedRouter {
  const router = new ScopedRouter();
  router.get(
    '/:provider/:model',
    {
      scope: 'public',
      summary: 'The price the gateway charges for a model, in USD cents per token.',
      params: modelPricingPath,
      query: 'none',
    },
    (req, res, _next, input) => {
      const { provider, model } = input.params(req);
      res.json(presentModelPricing(modelPricing(provider, model)));
    },
  );
  return router;
}

function organisationSettingsRouter(settings: OrganisationSettingsService, bodyLimit: string): ScopedRouter {
  const router = new ScopedRouter({ body: jsonBody(bodyLimit) });
  router.get(
    '/',
    { scope: 'organisation_settings.read', summary: "The organisation's settings.", query: 'none' },
    async (req, res) => {
      res.json(presentOrganisationSettings(await settings.show(requirePrincipal(req))));
    },
  );
  router.put(
    '/',
    {
      scope: 'organisation_settings.update',
      summary:
        "Changes the organisation's settings: inline configs, user keys, what workspaces may override, the fields log exports may not hold.",
      query: 'none',
      body: updateOrganisationSettingsBody,
    },
    async (req, res, _next, input) => {
      const updated = await settings.update(requirePrincipal(req), camelKeys(input.body(req)));
      res.json(presentOrganisationSettings(updated));
    },
  );
  return router;
}

/** The organisation's default guardrails, run on its requests before a config's. */
function guardrailDefaultsRouter(defaults: GuardrailDefaultsService, bodyLimit: string): ScopedRouter {
  const router = new ScopedRouter({ body: jsonBody(bodyLimit) });
  router.get(
    '/',
    {
      scope: 'organisation_settings.read',
      summary: "The organisation's default input and output guardrails, each by id and slug.",
      query: 'none',
    },
    async (req, res) => {
      res.json(presentGuardrailDefaults(await defaults.show(requirePrincipal(req))));
    },
  );
  router.put(
    '/',
    {
      scope: 'organisation_settings.update',
      summary:
        "Replaces the organisation's default input or output guardrails (ids or slugs of its organisation-level guardrails).",
      query: 'none',
      body: updateGuardrailDefaultsBody,
    },
    async (req, res, _next, input) => {
      const updated = await defaults.update(requirePrincipal(req), camelKeys(input.body(req)));
      res.json(presentGuardrailDefaults(updated));
    },
  );
  return router;
}

/** The workspaces exempted from the organisation's default guardrails of one phase. */
function workspaceExclusionsRouter(
  defaults: GuardrailDefaultsService,
  phase: GuardrailPhase,
  bodyLimit: string,
): ScopedRouter {
  const router = new ScopedRouter({ body: jsonBody(bodyLimit) });
  router.get(
    '/',
    {
      scope: 'organisation_exclusions.list',
      summary: `The workspaces exempted from the organisation's default ${phase} guardrails.`,
      query: 'none',
    },
    async (req, res) => {
      res.json({ workspace_ids: await defaults.exclusions(requirePrincipal(req), phase) });
    },
  );
  router.put(
    '/',
    {
      scope: 'organisation_exclusions.update',
      summary: `Adds workspaces to those exempted from the organisation's default ${phase} guardrails; override_existing replaces the list.`,
      query: 'none',
      body: updateWorkspaceExclusionsBody,
    },
    async (req, res, _next, input) => {
      const saved = await defaults.exclude(requirePrincipal(req), phase, camelKeys(input.body(req)));
      res.json({ workspace_ids: saved });
    },
  );
  return router;
}

/** OIDC connections, one per client_id. Bodies hold client secrets: never logged, masked in every answer. */
function ssoRouter(sso: SsoService, bodyLimit: string): ScopedRouter {
  const router = new ScopedRouter({ body: jsonBody(bodyLimit) });
  const present = (connection: Parameters<SsoService['maskedClientSecret']>[0]) =>
    presentSsoConnection(connection, sso.maskedClientSecret(connection));
  router.get(
    '/',
    {
      scope: 'organisation_sso.read',
      summary: "The organisation's SSO (OIDC) connections, client secrets masked.",
      query: 'none',
    },
    async (req, res) => {
      const list = await sso.listConnections(requirePrincipal(req));
      res.json(listBody(list.map(present), list.length));
    },
  );
  router.get(
    '/:client_id',
    {
      scope: 'organisation_sso.read',
      summary: 'One SSO connection, by client_id, its client secret masked.',
      params: ssoConnectionPath,
      query: 'none',
    },
    async (req, res, _next, input) => {
      const clientId = input.param(req, 'client_id', 'client_id');
      res.json(present(await sso.getConnection(requirePrincipal(req), clientId)));
    },
  );
  router.put(
    '/:client_id',
    {
      scope: 'organisation_sso.update',
      summary:
        "Creates or replaces the SSO connection of a client_id: the identity provider's issuer and the client's credentials.",
      params: ssoConnectionPath,
      query: 'none',
      body: upsertSsoConnectionBody,
    },
    async (req, res, _next, input) => {
      const clientId = input.param(req, 'client_id', 'client_id');
      const { connection } = await sso.upsertConnection(
        requirePrincipal(req),
        clientId,
        camelKeys(input.body(req)),
      );
      res.json(present(connection));
    },
  );
  router.delete(
    '/:client_id',
    {
      scope: 'organisation_sso.update',
      summary: 'Deletes an SSO connection.',
      params: ssoConnectionPath,
      query: 'none',
      body: 'none',
    },
    async (req, res, _next, input) => {
      const clientId = input.param(req, 'client_id', 'client_id');
      await sso.deleteConnection(requirePrincipal(req), clientId);
      res.json({});
    },
  );
  return router;
}

function emailDomainsRouter(sso: SsoService, bodyLimit: string): ScopedRouter {
  const router = new ScopedRouter({ body: jsonBody(bodyLimit) });
  router.get(
    '/',
    {
      scope: 'organisation_email_domains.list',
      summary: 'The email domains the organisation has claimed.',
      query: 'none',
    },
    async (req, res) => {
      const list = await sso.listDomains(requirePrincipal(req));
      res.json(listBody(list.map(presentEmailDomain), list.length));
    },
  );
  router.post(
    '/',
    {
      scope: 'organisation_email_domains.create',
      summary: 'Claims an email domain (and its subdomains if asked) for the organisation.',
      query: 'none',
      body: createEmailDomainBody,
    },
    async (req, res, _next, input) => {
      const claim = await sso.addDomain(requirePrincipal(req), camelKeys(input.body(req)));
      res.json(presentEmailDomain(claim));
    },
  );
  router.delete(
    '/:domain',
    {
      scope: 'organisation_email_domains.delete',
      summary: "Gives up the organisation's claim on an email domain.",
      query: 'none',
      body: 'none',
    },
    async (req, res) => {
      await sso.deleteDomain(requirePrincipal(req), req.params.domain);
      res.json({});
    },
  );
  return router;
}

export interface AdminDomain {
  integrations: IntegrationService;
  organisationSettings: OrganisationSettingsService;
  guardrailDefaults: GuardrailDefaultsService;
  sso: SsoService;
  scim: ScimDomain;
  ssoLogin: { logins: SsoLoginService; callbackUrl: string | undefined };
  deployments: DeploymentService;
  secretReferences: SecretReferenceService;
}

/** Scopes a system caller holds on the provider details routes: reading them, nothing else. */
const SYSTEM_PROVIDER_SCOPES = ['integrations.list', 'integrations.read'];

/** `systemAuthToken`: GRPC_AUTH_TOKEN, from which system callers' tokens derive; none when unset. */
export function adminRouter(
  domain: AdminDomain,
  authentication: RequestHandler,
  bodyLimits: BodyLimits,
  systemAuthToken?: string,
): ScopedRouter {
  return serveOpenApi(
    new ScopedRouter()
      .mount(
        ['/admin/v2/integrations', '/v1/integrations'],
        integrationsRouter(domain.integrations, bodyLimits.management),
        authentication,
      )
      .mount(
        ['/admin/v2/deployments', '/v1/deployments'],
        deploymentsRouter(domain.deployments, bodyLimits.management),
        authentication,
      )
      .mount(
        '/v1/secret-references',
        secretReferencesRouter(domain.secretReferences, bodyLimits.management),
        authentication,
      )
      .mount(
        '/v1/providers/details',
        providerDetailsRouter(domain.integrations),
        systemOrCallerAuthentication(authentication, systemAuthToken, SYSTEM_PROVIDER_SCOPES),
      )
      // List prices are public, as the pricing API's clients expect.
      .mount(['/model-configs/pricing', '/v1/model-configs/pricing'], modelPricingRouter())
      .mount(
        '/v1/admin/organisation/settings',
        organisationSettingsRouter(domain.organisationSettings, bodyLimits.management),
        authentication,
      )
      .mount(
        '/v1/admin/organisation/defaults',
        guardrailDefaultsRouter(domain.guardrailDefaults, bodyLimits.management),
        authentication,
      )
      .mount(
        '/v1/workspace-exclusions/input-guardrails',
        workspaceExclusionsRouter(domain.guardrailDefaults, 'input', bodyLimits.management),
        authentication,
      )
      .mount(
        '/v1/workspace-exclusions/output-guardrails',
        workspaceExclusionsRouter(domain.guardrailDefaults, 'output', bodyLimits.management),
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
        scimTokenRouter(domain.scim.tokens, bodyLimits.management),
        authentication,
      )
      .mount('/v1/scim', scimAdminRouter(domain.scim, bodyLimits.management), authentication)
      // SCIM clients authenticate with the organisation's SCIM token, checked by the router itself.
      .mount('/scim', scimProtocolRouter(domain.scim, bodyLimits.scim))
      // The SSO login is public: the person has no credential until it ends.
      .mount('/v1/auth/sso', ssoLoginRouter(domain.ssoLogin.logins, domain.ssoLogin)),
    'admin',
  );
}
