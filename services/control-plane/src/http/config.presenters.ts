import type { ConfigVersion, SavedConfig } from '../store/config.entities.ts';

/** A config's metadata, as lists show it. */
export function presentConfigSummary(config: SavedConfig) {
  return {
    id: config.id,
    name: config.name,
    slug: config.slug,
    organisation_id: config.organisationId,
    workspace_id: config.workspaceId,
    is_default: config.isDefault,
    status: config.status,
    owner_id: config.ownerId,
    updated_by: config.updatedBy,
    created_at: config.createdAt.toISOString(),
    last_updated_at: config.updatedAt.toISOString(),
    object: 'config' as const,
  };
}

/** One config with its current document. */
export function presentConfig(config: SavedConfig) {
  return { ...presentConfigSummary(config), version_id: config.currentVersionId, config: config.config };
}

/** One version of a config: the document as JSON text, as the reference shows it. */
export function presentConfigVersion(config: SavedConfig, version: ConfigVersion) {
  return {
    ...presentConfigSummary(config),
    updated_by: version.createdBy,
    last_updated_at: version.createdAt.toISOString(),
    config: JSON.stringify(version.config),
    format: 'json' as const,
    type: 'ORG_CONFIG' as const,
    version_id: version.id,
    version: version.version,
  };
}
