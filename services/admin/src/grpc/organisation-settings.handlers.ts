import { z } from 'zod';
import { parseInput } from '@switchyard/core';
import type { CallerRules, ServiceHandlers } from '@switchyard/runtime';
import type { admin } from '@switchyard/proto';
import type { OrganisationSettingsService } from '../domain/organisation-settings.service.ts';

/** The gateway reads whether inline provider choices are blocked. */
export const organisationSettingsCallers: CallerRules<typeof admin.OrganisationSettingsService> = {
  getOrganisationSettings: ['gateway'],
};

export function organisationSettingsHandlers(
  service: OrganisationSettingsService,
): ServiceHandlers<typeof admin.OrganisationSettingsService> {
  return {
    getOrganisationSettings: async ({ organisationId }) => {
      const choices = await service.choices(
        parseInput(z.uuid(), organisationId, 'request', 'organisation_id'),
      );
      return { blockInlineConfig: choices.block_inline_config };
    },
  };
}
