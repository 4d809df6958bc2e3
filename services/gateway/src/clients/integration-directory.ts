import type { ServiceClient } from '@switchyard/runtime';
import type { admin } from '@switchyard/proto';
import type { IntegrationDirectory } from '../domain/ports.ts';

/** The integrations a workspace may use, asked of admin on every call (GET /v1/models is not the hot path). */
export function integrationDirectory(
  client: ServiceClient<typeof admin.IntegrationService>,
): IntegrationDirectory {
  return {
    listIntegrations: (organisationId, workspaceId) =>
      client.listIntegrations({ organisationId, workspaceId }, { deadlineMs: 2_000 }),
  };
}
