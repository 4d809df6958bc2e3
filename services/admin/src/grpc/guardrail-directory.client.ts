import type { ServiceClient } from '@switchyard/runtime';
import type { guardrails } from '@switchyard/proto';
import type { GuardrailCatalogue } from '../domain/guardrail-defaults.service.ts';

/** The guardrails kept by control-plane, over its GuardrailDirectoryService. */
export function remoteGuardrailCatalogue(
  client: ServiceClient<typeof guardrails.GuardrailDirectoryService>,
): GuardrailCatalogue {
  return {
    async organisationGuardrails(organisationId) {
      const { guardrails: listed } = await client.listGuardrails({ organisationId }, { deadlineMs: 5_000 });
      // An empty workspace id marks an organisation-level guardrail; a workspace's is not a default.
      return listed.filter((g) => g.workspaceId === '').map((g) => ({ id: g.id, slug: g.slug }));
    },
  };
}
