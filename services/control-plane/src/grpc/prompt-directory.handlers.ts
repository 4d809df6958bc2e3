import type { CallerRules, ServiceHandlers } from '@switchyard/runtime';
import type { prompts } from '@switchyard/proto';
import type { PromptService } from '../domain/prompt.service.ts';
import { isUuid } from '../domain/ids.ts';

/** The gateways run and render prompts. */
export const promptDirectoryCallers: CallerRules<typeof prompts.PromptDirectoryService> = {
  getPrompt: ['gateway'],
};

export function promptDirectoryHandlers(
  service: PromptService,
): ServiceHandlers<typeof prompts.PromptDirectoryService> {
  return {
    getPrompt: async ({ organisationId, workspaceId, idOrSlug, version }) => {
      if (!isUuid(organisationId) || !isUuid(workspaceId) || !idOrSlug) return {};
      const prompt = await service.route(organisationId, workspaceId, idOrSlug, version);
      return prompt ? { prompt } : {};
    },
  };
}
