import {
  BadRequest,
  NotFound,
  ROUTING_LIMITS,
  RemoteCache,
  parseRoutingConfig,
  type RoutingConfig,
  type ServiceClient,
} from '@switchyard/platform';
import type { configs } from '@switchyard/proto';

/** A config the request runs with, and where it came from. */
export interface ResolvedConfig {
  config: RoutingConfig;
  /** The saved config's slug; undefined for an inline config. */
  slug: string | undefined;
  inline: boolean;
}

const SAVED_REFERENCE = /^[\w.:-]{1,256}$/;

/**
 * Saved configs, fetched from control-plane once and then served from memory; dropped when
 * a change event names their organisation.
 */
export class ConfigCache {
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

/**
 * The `<prefix>config` header: a JSON object is an inline config, anything else names a
 * saved config by id or slug.
 */
export function isInlineConfig(header: string): boolean {
  return header.trimStart().startsWith('{');
}

export async function resolveConfig(
  header: string,
  options: {
    organisationId: string;
    workspaceId: string;
    param: string;
    saved: ConfigCache | undefined;
  },
): Promise<ResolvedConfig> {
  const { param } = options;
  if (isInlineConfig(header)) {
    if (Buffer.byteLength(header) > ROUTING_LIMITS.maxConfigBytes) {
      throw new BadRequest(`Header ${param} is too long.`, { param });
    }
    let value: unknown;
    try {
      value = JSON.parse(header);
    } catch {
      throw new BadRequest(`Header ${param} must be a JSON object or the id or slug of a saved config.`, {
        param,
        code: 'invalid_config',
      });
    }
    return { config: parseRoutingConfig(value, 'config'), slug: undefined, inline: true };
  }
  const reference = header.trim();
  if (!SAVED_REFERENCE.test(reference)) {
    throw new BadRequest(`Header ${param} must be a JSON object or the id or slug of a saved config.`, {
      param,
      code: 'invalid_config',
    });
  }
  const saved = options.saved
    ? await options.saved.get(options.organisationId, options.workspaceId, reference)
    : null;
  if (!saved) {
    throw new NotFound(`Config '${reference}' not found.`, { param, code: 'config_not_found' });
  }
  return saved;
}
