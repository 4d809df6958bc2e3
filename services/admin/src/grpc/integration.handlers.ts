import type { ServiceHandlers } from '@switchyard/platform';
import type { admin } from '@switchyard/proto';
import type { IntegrationService } from '../domain/integration.service.ts';

export function integrationHandlers(
  service: IntegrationService,
): ServiceHandlers<typeof admin.IntegrationService> {
  return {
    getIntegrationCredentials: async ({ organisationId, workspaceId, slug }) => {
      const found = await service.credentials(organisationId, workspaceId, slug);
      if (!found) return {};
      const { integration, apiKey, headers, settings } = found;
      return {
        integration: {
          integrationId: integration.id,
          slug: integration.slug,
          provider: integration.provider,
          apiKey,
          baseUrl: integration.configurations.custom_host ?? '',
          headers,
          settings,
        },
      };
    },
  };
}
