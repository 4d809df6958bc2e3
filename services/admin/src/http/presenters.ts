import type { Integration } from '../store/entities.ts';

export function presentIntegration(integration: Integration) {
  return {
    id: integration.id,
    slug: integration.slug,
    name: integration.name,
    description: integration.description,
    ai_provider_id: integration.provider,
    organisation_id: integration.organisationId,
    workspace_id: integration.workspaceId,
    status: integration.status,
    created_at: integration.createdAt.toISOString(),
    last_updated_at: integration.updatedAt.toISOString(),
    object: 'integration' as const,
  };
}

/** Detail view: the key only ever appears masked. */
export function presentIntegrationDetail(integration: Integration, maskedKey: string | null) {
  const { headers, ...rest } = integration.configurations;
  return {
    ...presentIntegration(integration),
    masked_key: maskedKey,
    configurations: {
      ...rest,
      ...(headers ? { headers: Object.fromEntries(Object.keys(headers).map((name) => [name, '****'])) } : {}),
    },
  };
}
