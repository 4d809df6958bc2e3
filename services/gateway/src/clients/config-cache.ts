import { RemoteCache } from '@switchyard/core';
import { parseRoutingConfig } from '@switchyard/rules';
import type { ServiceClient } from '@switchyard/runtime';
import type { configs } from '@switchyard/proto';
import type { ResolvedConfig, SavedConfigs } from '../routing/config-source.ts';

/**
 * Saved configs, fetched from control-plane once and then served from memory; dropped when
 * a change event names their organisation.
 */
export class ConfigCache implements SavedConfigs {
  private readonly cache: RemoteCache<ResolvedConfig>;

  constructor(
    private readonly client: ServiceClient<typeof configs.ConfigService>,
    ttlMs = 60_000,
  ) {
    this.cache = new RemoteCache({ ttlMs });
  }

  get(organisationId: string, workspaceId: string, idOrSlug: string): Promise<ResolvedConfig | null> {
    return this.cache.get(`${organisationId}|${workspaceId}|${idOrSlug}`, async () => {
      const { config } = await this.client.getConfig(
        { organisationId, workspaceId, idOrSlug },
        { deadlineMs: 2_000 },
      );
      if (!config) return null;
      // Validated when saved; checked again so a document from an older release cannot misroute.
      const parsed = parseRoutingConfig(JSON.parse(config.configJson) as unknown, 'config');
      return { config: parsed, slug: config.slug, inline: false };
    });
  }

  /** Configs are few and change rarely: a change drops every entry of the organisation. */
  invalidateOrganisation(organisationId: string): void {
    this.cache.invalidatePrefix(`${organisationId}|`);
  }
}
