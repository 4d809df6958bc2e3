import { BadRequest, NotFound } from '@switchyard/core';
import { ROUTING_LIMITS, parseRoutingConfig, type RoutingConfig } from '@switchyard/rules';

/** A config the request runs with, and where it came from. */
export interface ResolvedConfig {
  config: RoutingConfig;
  /** The saved config's slug; undefined for an inline config. */
  slug: string | undefined;
  inline: boolean;
}

const SAVED_REFERENCE = /^[\w.:-]{1,256}$/;

/** Saved configs by id or slug (clients/config-cache.ts fetches them from control-plane); null when there is none. */
export interface SavedConfigs {
  get(organisationId: string, workspaceId: string, idOrSlug: string): Promise<ResolvedConfig | null>;
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
    saved: SavedConfigs | undefined;
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
    // The guardrails it names are looked up when the request runs (a missing one is a 400 then).
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
