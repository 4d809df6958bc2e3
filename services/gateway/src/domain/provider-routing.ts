import { BadRequest, NotFound, type Principal } from '@switchyard/platform';
import type { ProviderTarget } from '../providers/types.ts';
import type { IntegrationCache } from './integration-cache.ts';

export interface RoutedTarget {
  target: ProviderTarget;
  /** The model to send upstream: without its `@integration/` prefix. */
  model: string | undefined;
  /** True when the model had to change, so the client's bytes cannot be forwarded as they are. */
  modelRewritten: boolean;
}

export interface RoutingInput {
  principal: Principal & { workspaceId: string };
  /** The request's model, when it has one. */
  model: string | undefined;
  providerHeader: string | undefined;
  providerKey: string | undefined;
  integrations: IntegrationCache;
  headerPrefix: string;
  directProviders: { has(provider: string): boolean };
}

const INTEGRATION_MODEL = /^@([a-zA-Z0-9_-]{1,63})\/(.+)$/;

/**
 * Chooses the provider: `<prefix>provider: @slug` or a model `@slug/model` selects a saved
 * integration; `<prefix>provider: <kind>` selects a provider directly, with the provider key
 * from `Authorization` (the gateway key then travels in `<prefix>api-key`).
 */
export async function routeRequest(input: RoutingInput): Promise<RoutedTarget> {
  const { principal, providerHeader, headerPrefix } = input;
  let model = input.model;
  let slug: string | undefined;
  const modelMatch = model === undefined ? null : INTEGRATION_MODEL.exec(model);
  if (modelMatch) {
    slug = modelMatch[1];
    model = modelMatch[2]!;
  }
  const modelRewritten = model !== input.model;
  if (providerHeader?.startsWith('@')) slug = providerHeader.slice(1);

  if (slug) {
    const integration = await input.integrations.get(principal.organisationId, principal.workspaceId, slug);
    if (!integration) {
      throw new NotFound(`Integration '${slug}' not found.`, {
        param: 'model',
        code: 'integration_not_found',
      });
    }
    return {
      model,
      modelRewritten,
      target: {
        provider: integration.provider,
        apiKey: integration.apiKey,
        baseUrl: integration.baseUrl,
        headers: integration.headers,
        settings: integration.settings,
        integrationSlug: integration.slug,
      },
    };
  }
  if (providerHeader) {
    if (!input.directProviders.has(providerHeader)) {
      throw new BadRequest(`Unknown provider '${providerHeader}'.`, { param: `${headerPrefix}provider` });
    }
    return {
      model,
      modelRewritten,
      target: { provider: providerHeader, apiKey: input.providerKey ?? '', headers: {}, settings: {} },
    };
  }
  throw new BadRequest(
    `No provider selected: set the ${headerPrefix}provider header (e.g. "mock", "openai" or "@integration-slug"), ` +
      'or use a model of the form "@integration-slug/model".',
    { param: `${headerPrefix}provider`, code: 'provider_required' },
  );
}
