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
      modelNames(integration.provider, integration.models ?? []).map((model) => ({
        id: `@${integration.slug}/${model}`,
        object: 'model' as const,
        created: 0,
        owned_by: integration.provider,
      })),
    );
    return { object: 'list', data };
  }
}

/**
 * An integration's models: its provider's listed models but those disabled on it, then the
 * other models enabled on it (custom and fine-tuned models), in the order they were set.
 */
function modelNames(provider: string, set: ReadonlyArray<{ slug: string; enabled: boolean }>): string[] {
  const disabled = new Set(set.filter((model) => !model.enabled).map((model) => model.slug));
  const listed = modelsOf(provider).filter((model) => !disabled.has(model));
  const known = new Set(modelsOf(provider));
  const extra = set.filter((model) => model.enabled && !known.has(model.slug)).map((model) => model.slug);
  return [...listed, ...extra];
}
