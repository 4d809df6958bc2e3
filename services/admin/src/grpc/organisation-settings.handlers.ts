import { z } from 'zod';
import { parseInput, type ServiceHandlers } from '@switchyard/platform';
import type { admin } from '@switchyard/proto';
import type { OrganisationSettingsService } from '../domain/organisation-settings.service.ts';

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
