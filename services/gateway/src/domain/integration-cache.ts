import type { ServiceClient } from '@switchyard/platform';
import type { admin } from '@switchyard/proto';
import type { PricingMultiplier } from '../pricing/cost.ts';

export interface IntegrationCredentials {
  slug: string;
  provider: string;
  apiKey: string;
  baseUrl: string | undefined;
  headers: Record<string, string>;
  settings: Record<string, string>;
  pricing: PricingMultiplier | undefined;
}

interface Entry {
  value: IntegrationCredentials | null;
  expiresAt: number;
}

/**
 * Decrypted integration credentials, fetched from admin once and then served from memory.
 * Dropped on the integration's change event; a short TTL bounds staleness otherwise.
 */
export class IntegrationCache {
  private readonly entries = new Map<string, Entry>();
  private readonly inflight = new Map<
    string,
    { promise: Promise<IntegrationCredentials | null>; stale: boolean }
  >();

  constructor(
    private readonly client: ServiceClient<typeof admin.IntegrationService>,
    private readonly ttlMs = 60_000,
  ) {}

  async get(
    organisationId: string,
    workspaceId: string,
    slug: string,
  ): Promise<IntegrationCredentials | null> {
    const key = `${organisationId}:${slug}|${workspaceId}`;
    const cached = this.entries.get(key);
    if (cached && cached.expiresAt > Date.now()) return cached.value;
    let pending = this.inflight.get(key);
    if (!pending) {
      const started = { stale: false } as { promise: Promise<IntegrationCredentials | null>; stale: boolean };
      started.promise = this.fetch(organisationId, workspaceId, slug).finally(() => {
        if (this.inflight.get(key) === started) this.inflight.delete(key);
      });
      this.inflight.set(key, started);
      pending = started;
    }
    const value = await pending.promise;
    // An answer that was under way when the integration changed may carry the old state.
    if (!pending.stale) {
      this.entries.set(key, { value, expiresAt: Date.now() + (value ? this.ttlMs : 2_000) });
    }
    return value;
  }

  /** `organisationId:slug`, as change events name it. */
  invalidate(cacheKey: string): void {
    for (const key of this.entries.keys()) if (key.startsWith(`${cacheKey}|`)) this.entries.delete(key);
    for (const [key, pending] of this.inflight) {
      if (!key.startsWith(`${cacheKey}|`)) continue;
      pending.stale = true;
      this.inflight.delete(key);
    }
  }

  private async fetch(
    organisationId: string,
    workspaceId: string,
    slug: string,
  ): Promise<IntegrationCredentials | null> {
    const { integration } = await this.client.getIntegrationCredentials(
      { organisationId, workspaceId, slug },
      { deadlineMs: 2_000 },
    );
    if (!integration) return null;
    return {
      slug: integration.slug,
      provider: integration.provider,
      apiKey: integration.apiKey,
      baseUrl: integration.baseUrl || undefined,
      headers: integration.headers,
      settings: integration.settings,
      pricing: integration.pricingMultiplier,
    };
  }
}
