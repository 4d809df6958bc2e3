import type { CallerRules, ServiceHandlers } from '@switchyard/runtime';
import type { admin } from '@switchyard/proto';
import type { IntegrationService } from '../domain/integration.service.ts';
import type { Integration } from '../store/entities.ts';
import type { IntegrationModelSetting } from '../store/integration.repository.ts';

/** Provider credentials go to the gateway alone, which calls the providers. */
export const integrationCallers: CallerRules<typeof admin.IntegrationService> = {
  listIntegrations: ['gateway'],
  getIntegrationCredentials: ['gateway'],
};

export function integrationHandlers(
  service: IntegrationService,
): ServiceHandlers<typeof admin.IntegrationService> {
  return {
    listIntegrations: async ({ organisationId, workspaceId }) => {
      const [integrations] = await service.listForWorkspace(organisationId, workspaceId);
      const models = await service.modelSettings(integrations);
      return {
        integrations: integrations.map((i) => ({
          slug: i.slug,
          provider: i.provider,
          name: i.name,
          models: (models.get(i.id) ?? []).map(modelMessage),
        })),
      };
    },
    getIntegrationCredentials: async ({ organisationId, workspaceId, slug }) => {
      const found = await service.credentials(organisationId, workspaceId, slug);
      if (!found) return {};
      if (found === 'workspace_denied') return { workspaceDenied: true };
      const { integration, apiKey, headers, settings, models } = found;
      return {
        integration: {
          integrationId: integration.id,
          slug: integration.slug,
          provider: integration.provider,
          apiKey,
          baseUrl: integration.configurations.custom_host ?? '',
          headers,
          settings,
          pricingMultiplier: pricingMultiplier(integration.pricingAdjustments),
          models: models.map(modelMessage),
        },
      };
    },
  };
}

function modelMessage(model: IntegrationModelSetting) {
  return {
    slug: model.slug,
    enabled: model.enabled,
    customHost: model.configurations.custom_host ?? '',
    customHeaders: model.custom_headers,
  };
}

function pricingMultiplier(adjustments: Integration['pricingAdjustments']) {
  const m = adjustments?.multiplier;
  if (!m) return undefined;
  const value = (v: number | null | undefined) => (typeof v === 'number' ? v : undefined);
  return {
    default: value(m.default),
    requestToken: value(m.request_token),
    responseToken: value(m.response_token),
    cacheReadInputToken: value(m.cache_read_input_token),
    cacheWriteInputToken: value(m.cache_write_input_token),
    reasoningToken: value(m.reasoning_token),
  };
}
