import { RemoteCache } from '@switchyard/core';
import { inspectCustomHost } from '@switchyard/rules';
import type { ServiceClient } from '@switchyard/runtime';
import type { admin } from '@switchyard/proto';
import type { IntegrationCredentials, IntegrationDenied, IntegrationSource } from '../domain/ports.ts';

/**
 * Decrypted integration credentials, fetched from admin once and then served from memory, as
 * is a workspace's denial of an integration. Dropped on the integration's change event (a
 * change of workspace access too); a short TTL bounds staleness otherwise.
 */
export class IntegrationCache implements IntegrationSource {
  private readonly cache: RemoteCache<IntegrationCredentials | IntegrationDenied>;

  private readonly trustedCustomHosts: readonly string[];

  constructor(
    private readonly client: ServiceClient<typeof admin.IntegrationService>,
    options: { trustedCustomHosts?: readonly string[]; ttlMs?: number } = {},
  ) {
    this.cache = new RemoteCache({ ttlMs: options.ttlMs ?? 60_000 });
    this.trustedCustomHosts = options.trustedCustomHosts ?? [];
  }

  get(
    organisationId: string,
    workspaceId: string,
    slug: string,
  ): Promise<IntegrationCredentials | IntegrationDenied | null> {
    return this.cache.get(`${organisationId}:${slug}|${workspaceId}`, () =>
      this.fetch(organisationId, workspaceId, slug),
    );
  }

  /** `organisationId:slug`, as change events name it. */
  invalidate(cacheKey: string): void {
    this.cache.invalidatePrefix(`${cacheKey}|`);
  }

  private async fetch(
    organisationId: string,
    workspaceId: string,
    slug: string,
  ): Promise<IntegrationCredentials | IntegrationDenied | null> {
    const { integration, workspaceDenied } = await this.client.getIntegrationCredentials(
      { organisationId, workspaceId, slug },
      { deadlineMs: 2_000 },
    );
    if (workspaceDenied) return { workspaceDenied: true };
    if (!integration) return null;
    return {
      id: integration.integrationId || undefined,
      slug: integration.slug,
      provider: integration.provider,
      apiKey: integration.apiKey,
      baseUrl: integration.baseUrl || undefined,
      customHost: integration.baseUrl
        ? inspectCustomHost(integration.baseUrl, this.trustedCustomHosts)
        : undefined,
      headers: integration.headers,
      settings: integration.settings,
      pricing: integration.pricingMultiplier,
      models: new Map(
        integration.models.map((model) => [
          model.slug,
          {
            enabled: model.enabled,
            customHost: model.customHost
              ? inspectCustomHost(model.customHost, this.trustedCustomHosts)
              : undefined,
            customHeaders: model.customHeaders,
          },
        ]),
      ),
    };
  }
}
