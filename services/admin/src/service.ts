import { z } from 'zod';
import {
  ApiKeyCache,
  SecretBox,
  env,
  invalidateApiKeys,
  loadConfig,
  need,
  serveScoped,
  onChanges,
  remotePrincipalLookup,
  remoteWorkspaceLookup,
  callerAuthentication,
  type ServiceDefinition,
  type ServiceInstance,
} from '@switchyard/platform';
import { admin } from '@switchyard/proto';
import { IntegrationService } from './domain/integration.service.ts';
import { OrganisationSettingsService } from './domain/organisation-settings.service.ts';
import { SsoService } from './domain/sso.service.ts';
import { remoteKeySettings } from './domain/key-settings.ts';
import { integrationHandlers } from './grpc/integration.handlers.ts';
import { organisationSettingsHandlers } from './grpc/organisation-settings.handlers.ts';
import { adminRouter } from './http/routes.ts';
import { SCHEMA, entities } from './store/entities.ts';
import { IntegrationRepository } from './store/integration.repository.ts';
import { Init1763700000001 } from './store/migrations/1763700000001-init.ts';
import { PricingAdjustments1763700000003 } from './store/migrations/1763700000003-pricing-adjustments.ts';
import { OrganisationSettings1763700000004 } from './store/migrations/1763700000004-organisation-settings.ts';
import { Sso1763700000005 } from './store/migrations/1763700000005-sso.ts';
import { OrganisationSettingsRepository } from './store/organisation-settings.repository.ts';
import { SsoRepository } from './store/sso.repository.ts';

const configSchema = z.object({
  SWITCHYARD_ENCRYPTION_KEY: env.string().refine((v) => {
    try {
      new SecretBox(v);
      return true;
    } catch {
      return false;
    }
  }, 'must be 32 bytes, base64 or hex'),
  HEADER_PREFIX: env.string('x-vendor-'),
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
    ],
  },
  bus: true,
  clients: ['identity'],
  async create({ db, bus, clients, env: processEnv, logger }) {
    const config = loadConfig(configSchema, processEnv);
    const events = need(bus, 'event bus');
    const manager = need(db, 'database').manager;
    const secrets = new SecretBox(config.SWITCHYARD_ENCRYPTION_KEY);
    const integrations = new IntegrationService(new IntegrationRepository(manager), secrets, events, logger);
    const identityClient = need(clients.identity, 'identity client');
    const organisationSettings = new OrganisationSettingsService(
      new OrganisationSettingsRepository(manager),
      events,
      remoteKeySettings(identityClient),
    );
    const keys = new ApiKeyCache(remotePrincipalLookup(identityClient));
    return {
      ...serveScoped(
        adminRouter(
          { integrations, organisationSettings, sso: new SsoService(new SsoRepository(manager), secrets) },
          callerAuthentication({
            keys,
            headerPrefix: config.HEADER_PREFIX,
            env: processEnv,
            workspaces: remoteWorkspaceLookup(identityClient),
          }),
        ),
      ),
      grpc: (server) => {
        server.add(admin.IntegrationService, integrationHandlers(integrations));
        server.add(admin.OrganisationSettingsService, organisationSettingsHandlers(organisationSettings));
      },
      seedIntegrationsFromEnvironment: (organisationId) =>
        integrations.seedFromEnvironment(organisationId, processEnv),
      ensureMockIntegration: (organisationId) => integrations.ensureMockIntegration(organisationId),
      async start() {
        await onChanges(events, logger, 'admin', invalidateApiKeys(keys));
      },
    };
  },
};
