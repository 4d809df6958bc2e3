import { z } from 'zod';
import { SecretBox, bodyLimitEnv, bodyLimitsFrom, env, loadConfig, sharedEnv } from '@switchyard/core';
import { systemResolver } from '@switchyard/rules';
import { ApiKeyCache, jwtEnvSchema } from '@switchyard/access';
import {
  invalidateApiKeys,
  need,
  serveScoped,
  onChanges,
  remotePrincipalLookup,
  remoteWorkspaceLookup,
  callerAuthentication,
  describedOnly,
  type ServiceDefinition,
  type ServiceInstance,
} from '@switchyard/runtime';
import { admin } from '@switchyard/proto';
import { IntegrationService } from './domain/integration.service.ts';
import { OrganisationSettingsService } from './domain/organisation-settings.service.ts';
import { GuardrailDefaultsService } from './domain/guardrail-defaults.service.ts';
import { SsoService } from './domain/sso.service.ts';
import { ScimGroupService } from './domain/scim-groups.service.ts';
import { ScimMappingService } from './domain/scim-mappings.service.ts';
import { ScimTokenService } from './domain/scim-tokens.service.ts';
import { ScimUserService } from './domain/scim-users.service.ts';
import { ScimWorkspaceSync } from './domain/scim-workspace-sync.ts';
import { remoteOrganisationDirectory } from './grpc/organisation-directory.client.ts';
import { remoteKeySettings } from './grpc/key-settings.client.ts';
import { remoteSsoSessions } from './grpc/sso-sessions.client.ts';
import { remoteGuardrailCatalogue } from './grpc/guardrail-directory.client.ts';
import { integrationCallers, integrationHandlers } from './grpc/integration.handlers.ts';
import { secretReferenceCallers, secretReferenceHandlers } from './grpc/secret-reference.handlers.ts';
import {
  organisationSettingsCallers,
  organisationSettingsHandlers,
} from './grpc/organisation-settings.handlers.ts';
import { adminRouter } from './http/routes.ts';
import { SsoLoginService } from './domain/sso-login.service.ts';
import { OidcClient } from './clients/oidc-client.ts';
import { SsoLoginRepository } from './store/sso-login.repository.ts';
import { SsoLogin1763700000008 } from './store/migrations/1763700000008-sso-login.ts';
import { GuardrailDefaults1763700000009 } from './store/migrations/1763700000009-guardrail-defaults.ts';
import { GuardrailDefaultsRepository } from './store/guardrail-defaults.repository.ts';
import { IntegrationModels1763700000011 } from './store/migrations/1763700000011-integration-models.ts';
import { IntegrationWorkspaces1763700000012 } from './store/migrations/1763700000012-integration-workspaces.ts';
import { Deployments1763700000010 } from './store/migrations/1763700000010-deployments.ts';
import { DeploymentRepository } from './store/deployment.repository.ts';
import { DeploymentService } from './domain/deployment.service.ts';
import { deploymentCallers, deploymentHandlers } from './grpc/deployment.handlers.ts';
import { SecretReferences1763700000013 } from './store/migrations/1763700000013-secret-references.ts';
import { InternalSecrets1763700000054 } from './store/migrations/1763700000054-internal-secrets.ts';
import { SecretReferenceRepository } from './store/secret-reference.repository.ts';
import { SecretReferenceService } from './domain/secret-reference.service.ts';
import { SecretManagers } from './clients/secret-reference.managers.ts';
import { SCHEMA, entities } from './store/entities.ts';
import { IntegrationRepository } from './store/integration.repository.ts';
import { Init1763700000001 } from './store/migrations/1763700000001-init.ts';
import { PricingAdjustments1763700000003 } from './store/migrations/1763700000003-pricing-adjustments.ts';
import { OrganisationSettings1763700000004 } from './store/migrations/1763700000004-organisation-settings.ts';
import { Sso1763700000005 } from './store/migrations/1763700000005-sso.ts';
import { Scim1763700000006 } from './store/migrations/1763700000006-scim.ts';
import { PluginCredentials1763700000007 } from './store/migrations/1763700000007-plugin-credentials.ts';
import { OrganisationSettingsRepository } from './store/organisation-settings.repository.ts';
import { SsoRepository } from './store/sso.repository.ts';
import { ScimRepository } from './store/scim.repository.ts';

const configSchema = z.object({
  SWITCHYARD_ENCRYPTION_KEY: sharedEnv.SWITCHYARD_ENCRYPTION_KEY,
  HEADER_PREFIX: sharedEnv.HEADER_PREFIX,
  TRUSTED_CUSTOM_HOSTS: sharedEnv.TRUSTED_CUSTOM_HOSTS,
  SSO_IDP_TIMEOUT_MS: env.int(10_000, 100, 120_000).meta({
    description:
      'timeout of each call to an SSO identity provider (discovery, token, keys); Helm: `config.admin.ssoIdpTimeoutMs`',
  }),
  SSO_CALLBACK_URL: env
    .optionalString()
    .pipe(z.url({ protocol: /^https?$/ }).optional())
    .meta({
      description:
        "the SSO `redirect_uri`, e.g. `https://switchyard.example.com/v1/auth/sso/callback`; unset: the request's origin + `/v1/auth/sso/callback`. Set it behind a proxy (Helm: `config.admin.ssoCallbackUrl`)",
    }),
  ...bodyLimitEnv,
});

export interface Admin extends ServiceInstance {
  seedIntegrationsFromEnvironment(organisationId: string): Promise<string[]>;
  ensureMockIntegration(organisationId: string): Promise<void>;
}

/** Integrations (provider credentials), organisation settings and SSO settings. */
export const adminService: ServiceDefinition<Admin> = {
  name: 'admin',
  database: {
    schema: SCHEMA,
    entities,
    migrations: [
      Init1763700000001,
      PricingAdjustments1763700000003,
      OrganisationSettings1763700000004,
      Sso1763700000005,
      Scim1763700000006,
      PluginCredentials1763700000007,
      SsoLogin1763700000008,
      GuardrailDefaults1763700000009,
      Deployments1763700000010,
      IntegrationModels1763700000011,
      IntegrationWorkspaces1763700000012,
      SecretReferences1763700000013,
      InternalSecrets1763700000054,
    ],
  },
  bus: true,
  clients: ['identity', 'ssoSessions', 'guardrailDirectory'],
  // The OAuth body limit is validated with the others, and used by control-plane only.
  settings: configSchema.omit({ MAX_OAUTH_REQUEST_BODY: true }).extend(jwtEnvSchema.shape),
  describeRoutes: () =>
    adminRouter(
      {
        integrations: describedOnly('integrations'),
        organisationSettings: describedOnly('organisation settings'),
        guardrailDefaults: describedOnly('default guardrails'),
        sso: describedOnly('SSO'),
        scim: {
          tokens: describedOnly('SCIM tokens'),
          users: describedOnly('SCIM users'),
          groups: describedOnly('SCIM groups'),
          mappings: describedOnly('SCIM workspace mappings'),
        },
        ssoLogin: { logins: describedOnly('SSO logins'), callbackUrl: undefined },
        deployments: describedOnly('deployments'),
        secretReferences: describedOnly('secret references'),
      },
      describedOnly('authentication'),
      bodyLimitsFrom(loadConfig(z.object(bodyLimitEnv), {})),
    ).routes(),
  async create({ db, bus, clients, env: processEnv, logger, resolve = systemResolver }) {
    const config = loadConfig(configSchema, processEnv);
    const events = need(bus, 'event bus');
    const manager = need(db, 'database').manager;
    const secrets = new SecretBox(config.SWITCHYARD_ENCRYPTION_KEY);
    const identityClient = need(clients.identity, 'identity client');
    const directory = remoteOrganisationDirectory(identityClient);
    const secretReferences = new SecretReferenceService(
      new SecretReferenceRepository(manager),
      secrets,
      directory,
      events,
      // The gateway waits 2 s for an integration's credentials: a secret fetched past that is wasted.
      new SecretManagers({ trusted: config.TRUSTED_CUSTOM_HOSTS, resolve, timeoutMs: 1_500 }),
    );
    const integrations = new IntegrationService(
      new IntegrationRepository(manager),
      secrets,
      events,
      logger,
      { trusted: config.TRUSTED_CUSTOM_HOSTS, resolve },
      directory,
      secretReferences,
    );
    const organisationSettings = new OrganisationSettingsService(
      new OrganisationSettingsRepository(manager),
      events,
      remoteKeySettings(identityClient),
    );
    const guardrailDefaults = new GuardrailDefaultsService(
      new GuardrailDefaultsRepository(manager),
      events,
      remoteGuardrailCatalogue(need(clients.guardrailDirectory, 'guardrail directory client')),
      directory,
    );
    const scimRepository = new ScimRepository(manager);
    const scimWorkspaces = new ScimWorkspaceSync(scimRepository, directory, logger);
    const scim = {
      tokens: new ScimTokenService(scimRepository, secrets),
      users: new ScimUserService(scimRepository, directory, scimWorkspaces),
      groups: new ScimGroupService(scimRepository, scimWorkspaces),
      mappings: new ScimMappingService(scimRepository, directory, scimWorkspaces),
    };
    const deployments = new DeploymentService(new DeploymentRepository(manager), secrets, directory);
    const keys = new ApiKeyCache(remotePrincipalLookup(identityClient));
    const workspaces = remoteWorkspaceLookup(identityClient);
    return {
      ...serveScoped(
        adminRouter(
          {
            integrations,
            organisationSettings,
            guardrailDefaults,
            sso: new SsoService(new SsoRepository(manager), secrets),
            ssoLogin: {
              logins: new SsoLoginService(
                new SsoLoginRepository(manager),
                secrets,
                new OidcClient({
                  trustedHosts: config.TRUSTED_CUSTOM_HOSTS,
                  timeoutMs: config.SSO_IDP_TIMEOUT_MS,
                  resolve,
                }),
                remoteSsoSessions(need(clients.ssoSessions, 'SSO session client')),
              ),
              callbackUrl: config.SSO_CALLBACK_URL,
            },
            scim,
            deployments,
            secretReferences,
          },
          callerAuthentication({
            keys,
            headerPrefix: config.HEADER_PREFIX,
            env: processEnv,
            workspaces,
          }),
          bodyLimitsFrom(config),
          processEnv.GRPC_AUTH_TOKEN || undefined,
        ),
      ),
      grpc: (server) => {
        server.add(admin.IntegrationService, integrationHandlers(integrations), integrationCallers);
        server.add(
          admin.OrganisationSettingsService,
          organisationSettingsHandlers(organisationSettings, guardrailDefaults),
          organisationSettingsCallers,
        );
        server.add(admin.DeploymentService, deploymentHandlers(deployments), deploymentCallers);
        server.add(
          admin.SecretReferenceService,
          secretReferenceHandlers(secretReferences),
          secretReferenceCallers,
        );
      },
      seedIntegrationsFromEnvironment: (organisationId) =>
        integrations.seedFromEnvironment(organisationId, processEnv),
      ensureMockIntegration: (organisationId) => integrations.ensureMockIntegration(organisationId),
      async start() {
        await onChanges(events, logger, 'admin', invalidateApiKeys(keys, workspaces));
      },
    };
  },
};
