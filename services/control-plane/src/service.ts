import type { DataSource } from 'typeorm';
import { z } from 'zod';
import {
  MemoryEventBus,
  ApiKeyCache,
  env,
  invalidateApiKeys,
  onChanges,
  loadConfig,
  need,
  type Logger,
  type ServiceDefinition,
  type ServiceInstance,
} from '@switchyard/platform';
import { identity } from '@switchyard/proto';
import { IdentityService, type BootstrapResult } from './domain/identity.service.ts';
import { identityHandlers } from './grpc/identity.handlers.ts';
import { controlPlaneRouter } from './http/routes.ts';
import { SCHEMA, entities } from './store/entities.ts';
import { IdentityRepository } from './store/identity.repository.ts';
import { Init1763700000000 } from './store/migrations/1763700000000-init.ts';

const configSchema = z.object({
  API_KEY_PREFIX: env.string('sy-'),
  HEADER_PREFIX: env.string('x-vendor-'),
  SWITCHYARD_ADMIN_KEY: env.optionalString(),
});

export interface ControlPlane extends ServiceInstance {
  bootstrap(options: { adminKey?: string | undefined; withWorkspaceKey: boolean }): Promise<BootstrapResult>;
}

/** Organisations, workspaces, API keys; the identity source every other service asks. */
export const controlPlane: ServiceDefinition<ControlPlane> = {
  name: 'control-plane',
  database: { schema: SCHEMA, entities, migrations: [Init1763700000000] },
  bus: true,
  async create({ db, bus, env: processEnv, logger }) {
    const config = loadConfig(configSchema, processEnv);
    const repo = new IdentityRepository(need(db, 'database').manager);
    const events = need(bus, 'event bus');
    const service = new IdentityService(repo, events, logger, config.API_KEY_PREFIX);
    // Local lookups are cheap, but the cache keeps revocation semantics identical to other services.
    const keys = new ApiKeyCache((hash) => service.resolveApiKey(hash), { ttlMs: 5_000 });
    return {
      router: controlPlaneRouter(service, keys, config.HEADER_PREFIX),
      grpc: (server) => server.add(identity.IdentityService, identityHandlers(service)),
      bootstrap: (options) => service.bootstrap(options),
      async start() {
        await onChanges(events, logger, 'control-plane', invalidateApiKeys(keys));
        if (config.SWITCHYARD_ADMIN_KEY) {
          await service.bootstrap({ adminKey: config.SWITCHYARD_ADMIN_KEY, withWorkspaceKey: false });
        }
      },
    };
  },
};

/** The `bootstrap` command: creates the first organisation on an already-migrated database. */
export async function bootstrapDatabase(
  dataSource: DataSource,
  logger: Logger,
  options: { adminKey?: string | undefined; apiKeyPrefix: string },
): Promise<BootstrapResult> {
  const service = new IdentityService(
    new IdentityRepository(dataSource.manager),
    new MemoryEventBus(),
    logger,
    options.apiKeyPrefix,
  );
  return service.bootstrap({ adminKey: options.adminKey, withWorkspaceKey: true });
}
