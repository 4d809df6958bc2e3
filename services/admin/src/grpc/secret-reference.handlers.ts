import type { CallerRules, ServiceHandlers } from '@switchyard/runtime';
import type { admin } from '@switchyard/proto';
import type { SecretReferenceService } from '../domain/secret-reference.service.ts';

/**
 * Control-plane alone resolves secret mappings here, for its guardrail webhooks and MCP
 * integrations (the gateway gets an integration's mapped values with its credentials).
 */
export const secretReferenceCallers: CallerRules<typeof admin.SecretReferenceService> = {
  resolveSecretMappings: ['control-plane'],
};

export function secretReferenceHandlers(
  service: SecretReferenceService,
): ServiceHandlers<typeof admin.SecretReferenceService> {
  return {
    resolveSecretMappings: async ({ organisationId, workspaceId, mappings, checkOnly }) =>
      service.resolveMappings({ organisationId, workspaceId, mappings, checkOnly }),
  };
}
