import type { CallerRules, ServiceHandlers } from '@switchyard/runtime';
import type { configs } from '@switchyard/proto';
import type { ConfigService } from '../domain/config.service.ts';

/** Saved configs are read by the gateway's router alone. */
export const configCallers: CallerRules<typeof configs.ConfigService> = {
  getConfig: ['gateway'],
};

export function configHandlers(service: ConfigService): ServiceHandlers<typeof configs.ConfigService> {
  return {
    getConfig: async ({ organisationId, workspaceId, idOrSlug }) => {
      const config = await service.findForWorkspace(organisationId, workspaceId, idOrSlug);
      if (!config) return {};
      return {
        config: {
          id: config.id,
          slug: config.slug,
          name: config.name,
          workspaceId: config.workspaceId,
          configJson: JSON.stringify(config.config),
          versionId: config.currentVersionId,
        },
      };
    },
  };
}
