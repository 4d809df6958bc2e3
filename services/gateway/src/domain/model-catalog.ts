import type { Principal } from '@switchyard/access';
import { modelsOf } from '../pricing/prices.ts';
import type { IntegrationDirectory } from './ports.ts';

export interface ModelEntry {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
}

/**
 * GET /v1/models: every model the caller can use, named as it would request it
 * (`@integration/model`), from the integrations its workspace may use and the catalogue of
 * each one's provider.
 */
export class ModelCatalog {
  constructor(private readonly integrations: IntegrationDirectory) {}

  /**
   * With `only`, just the integrations it names (by slug) or whose provider kind it names:
   * the providers a request's provider header or config refers to.
   */
  async list(
    principal: Principal & { workspaceId: string },
    only?: ReadonlySet<string>,
  ): Promise<{ object: 'list'; data: ModelEntry[] }> {
    const { integrations } = await this.integrations.listIntegrations(
      principal.organisationId,
      principal.workspaceId,
    );
    const chosen = only
      ? integrations.filter((i) => only.has(`@${i.slug}`) || only.has(i.provider))
      : integrations;
    const data = chosen.flatMap((integration) =>
      modelsOf(integration.provider).map((model) => ({
        id: `@${integration.slug}/${model}`,
        object: 'model' as const,
        created: 0,
        owned_by: integration.provider,
      })),
    );
    return { object: 'list', data };
  }
}
