import type { CallerRules, ServiceHandlers } from '@switchyard/runtime';
import type { guardrails } from '@switchyard/proto';
import type { GuardrailService } from '../domain/guardrail.service.ts';

/** The gateways run guardrails; admin checks the ones an organisation chooses as its defaults. */
export const guardrailDirectoryCallers: CallerRules<typeof guardrails.GuardrailDirectoryService> = {
  listGuardrails: ['gateway', 'admin'],
};

export function guardrailDirectoryHandlers(
  service: GuardrailService,
): ServiceHandlers<typeof guardrails.GuardrailDirectoryService> {
  return {
    listGuardrails: async ({ organisationId }) => {
      const active = await service.activeGuardrails(organisationId);
      return {
        guardrails: active.map((found) => ({
          id: found.id,
          slug: found.slug,
          organisationId: found.organisationId,
          workspaceId: found.workspaceId ?? '',
          versionId: found.currentVersionId,
          name: found.name,
          checksJson: JSON.stringify(found.checks),
          actionsJson: JSON.stringify(found.actions),
        })),
      };
    },
  };
}
