import type { ApiKey } from '../store/entities.ts';
import { maskedKey } from '../domain/api-keys.ts';
import type { WorkspaceDetails } from '../domain/workspace.service.ts';
import { formatName, type NameFormat } from '../domain/workspace-names.ts';

export function presentWorkspace(
  { workspace, defaults }: WorkspaceDetails,
  nameFormat: NameFormat = 'display',
) {
  return {
    id: workspace.id,
    slug: workspace.slug,
    name: formatName(workspace.name, workspace.slug, nameFormat),
    description: workspace.description,
    organisation_id: workspace.organisationId,
    defaults: { user_api_key_config: defaults.userApiKeyConfig, config: defaults.config },
    settings: { user_api_key_auto_create: workspace.userApiKeyAutoCreate },
    security_settings: workspace.securitySettings,
    created_at: workspace.createdAt.toISOString(),
    last_updated_at: workspace.updatedAt.toISOString(),
    object: 'workspace' as const,
  };
}

const typeNames = {
  organisation_admin: 'organisation-service',
  workspace_service: 'workspace-service',
  workspace_user: 'workspace-user',
} as const;

/**
 * An API key as every response shows it: masked, never the secret. Its default config by
 * slug (`configSlugs`, from ApiKeyService.configSlugs), whatever it is stored by.
 */
export function presentApiKey(apiKey: ApiKey, configSlugs: ReadonlyMap<string, string>) {
  return {
    id: apiKey.id,
    key: maskedKey(apiKey),
    name: apiKey.name,
    description: apiKey.description,
    type: typeNames[apiKey.kind],
    organisation_id: apiKey.organisationId,
    workspace_id: apiKey.workspaceId,
    user_id: apiKey.userId,
    status: apiKey.status,
    scopes: apiKey.scopes,
    created_at: apiKey.createdAt.toISOString(),
    last_updated_at: apiKey.updatedAt.toISOString(),
    expires_at: apiKey.expiresAt?.toISOString() ?? null,
    rotation_policy:
      apiKey.rotationPeriodDays === null && apiKey.nextRotationAt === null
        ? null
        : {
            rotation_period_days: apiKey.rotationPeriodDays,
            next_rotation_at: apiKey.nextRotationAt?.toISOString() ?? null,
          },
    defaults: {
      config_id: apiKey.defaultConfigId ? (configSlugs.get(apiKey.defaultConfigId) ?? null) : null,
      metadata: apiKey.defaultMetadata,
      allow_config_override: apiKey.allowConfigOverride,
    },
    object: 'api-key' as const,
  };
}
