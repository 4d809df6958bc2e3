import { randomUUID } from 'node:crypto';
import { identity } from '@switchyard/proto';
import type { RequestHandler } from 'express';
import {
  apiKeyAuthentication,
  type ApiKeyCache,
  type ApiKeyKind,
  jwtEnvSchema,
  jwtStrategy,
  type JwtAdmission,
  type Principal,
  type PrincipalLookup,
  type WorkspaceLookup,
} from '@switchyard/access';
import { loadConfig, type Logger, RemoteCache } from '@switchyard/core';
import { type EventBus, subscribeEvents, type Subscription, Topics } from '@switchyard/adapters';
import type { ServiceClient } from './grpc.ts';
import { events } from '@switchyard/proto';

const kinds: Record<number, ApiKeyKind> = {
  [identity.ApiKeyKind.ORGANISATION_ADMIN]: 'organisation_admin',
  [identity.ApiKeyKind.WORKSPACE_SERVICE]: 'workspace_service',
  [identity.ApiKeyKind.WORKSPACE_USER]: 'workspace_user',
};

export function principalFromProto(p: identity.ApiKeyPrincipal): Principal | null {
  const kind = kinds[p.kind];
  if (!kind) return null;
  const expiresAt = Number(p.expiresAtMs);
  const organisationCreatedAt = Number(p.organisationCreatedAtMs);
  return {
    apiKeyId: p.apiKeyId,
    organisationId: p.organisationId,
    workspaceId: p.workspaceId || null,
    workspaceSlug: p.workspaceSlug || null,
    kind,
    scopes: p.scopes,
    expiresAt: expiresAt > 0 ? expiresAt : null,
    userId: p.userId || null,
    name: p.name,
    organisationCreatedAt: organisationCreatedAt > 0 ? organisationCreatedAt : null,
    ...(p.authMethod === 'oauth'
      ? {
          authMethod: 'oauth' as const,
          oauthClientId: p.oauthClientId,
          ...(p.oauthResource ? { oauthResource: p.oauthResource } : {}),
        }
      : {}),
    ...(p.authMethod === 'session' ? { authMethod: 'session' as const } : {}),
    ...(p.defaultConfig || Object.keys(p.defaultMetadata).length > 0 || p.configOverrideRefused
      ? {
          defaults: {
            config: p.defaultConfig || null,
            metadata: { ...p.defaultMetadata },
            allowConfigOverride: !p.configOverrideRefused,
          },
        }
      : {}),
  };
}

/** Resolves key hashes through control-plane's IdentityService. */
export function remotePrincipalLookup(
  client: ServiceClient<typeof identity.IdentityService>,
): PrincipalLookup {
  return async (keyHash) => {
    const response = await client.resolveApiKey({ keyHash }, { deadlineMs: 2_000 });
    return response.principal ? principalFromProto(response.principal) : null;
  };
}

/** A workspace lookup that can be told a workspace changed. */
export type RemoteWorkspaceLookup = WorkspaceLookup & {
  /**
   * Drops what is kept of the workspace (its default config may have changed, or it is gone),
   * and what was not found (it may be the workspace just created).
   */
  invalidateWorkspace(workspaceId: string): void;
};

/**
 * Workspaces by id or slug through control-plane's IdentityService, kept for 30 s or until a
 * change of the workspace (`invalidateApiKeys`).
 */
export function remoteWorkspaceLookup(
  client: ServiceClient<typeof identity.IdentityService>,
): RemoteWorkspaceLookup {
  const cache = new RemoteCache<NonNullable<Awaited<ReturnType<WorkspaceLookup>>>>({ ttlMs: 30_000 });
  const lookup: WorkspaceLookup = (organisation, workspace) =>
    cache.get(`${organisation}\0${workspace}`, async () => {
      const found = await client.resolveWorkspace({ organisation, workspace }, { deadlineMs: 2_000 });
      if (!found.workspaceId) return null;
      const createdAt = Number(found.organisationCreatedAtMs);
      return {
        id: found.workspaceId,
        slug: found.workspaceSlug,
        organisationId: found.organisationId,
        organisationCreatedAt: createdAt > 0 ? createdAt : null,
        defaultConfig: found.defaultConfig || null,
      };
    });
  return Object.assign(lookup, {
    invalidateWorkspace: (workspaceId: string) =>
      cache.invalidateValues((found) => found === null || found.id === workspaceId),
  });
}

/**
 * The one authentication middleware of a service: API keys, and bearer JWTs when the
 * deployment's environment names JWKS URIs (`JWT_*`, see `jwtEnvSchema`). Which tokens are
 * admitted follows the environment's allow-lists unless `jwtAdmission` says otherwise (a
 * gateway running as a named deployment: its deployment's settings).
 */
export function callerAuthentication(options: {
  keys: ApiKeyCache;
  headerPrefix: string;
  env: NodeJS.ProcessEnv;
  workspaces: WorkspaceLookup;
  jwtAdmission?: () => JwtAdmission | undefined;
}): RequestHandler {
  const jwt = jwtStrategy(
    loadConfig(jwtEnvSchema, options.env),
    options.workspaces,
    options.jwtAdmission ? { admission: options.jwtAdmission } : {},
  );
  return apiKeyAuthentication({ cache: options.keys, headerPrefix: options.headerPrefix, jwt });
}

/**
 * Every instance sees every change (a consumer group of its own), so each drops stale
 * entries from its own caches.
 */
export function onChanges(
  bus: EventBus,
  logger: Logger,
  service: string,
  handler: (change: events.ChangeEvent) => void,
): Promise<Subscription> {
  return subscribeEvents(bus, logger, {
    groupId: `${service}.changes.${randomUUID()}`,
    topic: Topics.changes,
    schema: events.ChangeEventSchema,
    fromBeginning: false,
    handler: async (change) => handler(change),
  });
}

/**
 * Drops revoked or changed credentials: API keys and OAuth access tokens, both cached by hash;
 * and, when a workspace changes (its default configs), the keys of that workspace, whose
 * principals carry those defaults, and the workspace as JWT callers' lookups hold it.
 */
export function invalidateApiKeys(
  cache: ApiKeyCache,
  workspaces?: Pick<RemoteWorkspaceLookup, 'invalidateWorkspace'>,
): (change: events.ChangeEvent) => void {
  return (change) => {
    if ((change.entity === 'api_key' || change.entity === 'oauth_token') && change.cacheKey) {
      cache.invalidate(change.cacheKey);
    }
    if (change.entity === 'workspace' && change.workspaceId) {
      cache.invalidateWorkspace(change.workspaceId);
      workspaces?.invalidateWorkspace(change.workspaceId);
    }
  };
}
