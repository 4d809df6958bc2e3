import { requireWorkspacePrincipal, type ServiceClient } from '@switchyard/platform';
import type { admin } from '@switchyard/proto';
import type { Request } from 'express';
import { modelsOf } from '../pricing/prices.ts';

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
  constructor(private readonly integrations: ServiceClient<typeof admin.IntegrationService>) {}

  /**
   * With `only`, just the integrations it names (by slug) or whose provider kind it names:
   * the providers a request's provider header or config refers to.
   */
  async list(req: Request, only?: ReadonlySet<string>): Promise<{ object: 'list'; data: ModelEntry[] }> {
    const principal = requireWorkspacePrincipal(req);
    const { integrations } = await this.integrations.listIntegrations(
      { organisationId: principal.organisationId, workspaceId: principal.workspaceId },
      { deadlineMs: 2_000 },
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
