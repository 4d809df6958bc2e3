import { z } from 'zod';
import { parseInput } from '@switchyard/core';
import type { CallerRules, ServiceHandlers } from '@switchyard/runtime';
import type { admin } from '@switchyard/proto';
import type { OrganisationSettingsService } from '../domain/organisation-settings.service.ts';
import type { GuardrailDefaultsService } from '../domain/guardrail-defaults.service.ts';

/**
 * The gateway reads whether inline provider choices are blocked, and the default guardrails it
 * runs; log-export reads the fields its exports may not hold.
 */
export const organisationSettingsCallers: CallerRules<typeof admin.OrganisationSettingsService> = {
  getOrganisationSettings: ['gateway', 'log-export'],
};

export function organisationSettingsHandlers(
  service: OrganisationSettingsService,
  guardrailDefaults: Pick<GuardrailDefaultsService, 'stored'>,
): ServiceHandlers<typeof admin.OrganisationSettingsService> {
  return {
    getOrganisationSettings: async ({ organisationId }) => {
      const id = parseInput(z.uuid(), organisationId, 'request', 'organisation_id');
      const [choices, defaults] = await Promise.all([service.choices(id), guardrailDefaults.stored(id)]);
      return {
        blockInlineConfig: choices.block_inline_config,
        inputGuardrailIds: defaults.guardrailIds.input,
        outputGuardrailIds: defaults.guardrailIds.output,
        inputGuardrailExcludedWorkspaceIds: defaults.excludedWorkspaceIds.input,
        outputGuardrailExcludedWorkspaceIds: defaults.excludedWorkspaceIds.output,
        exportDeniedFields: choices.export_settings?.deniedFields ?? [],
      };
    },
  };
}
