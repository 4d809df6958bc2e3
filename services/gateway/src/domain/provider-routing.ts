import { BadRequest, NotFound, type Principal } from '@switchyard/platform';
import type { ChatBody, ProviderTarget } from '../providers/types.ts';
import type { IntegrationCache } from './integration-cache.ts';

export interface RoutedRequest {
  target: ProviderTarget;
  body: ChatBody;
  /** False when the body had to change (e.g. the model lost its `@integration/` prefix). */
  bodyUnchanged: boolean;
}

const INTEGRATION_MODEL = /^@([a-zA-Z0-9_-]{1,63})\/(.+)$/;

/**
 * Chooses the provider: `<prefix>provider: @slug` or a model `@slug/model` selects a saved
 * integration; `<prefix>provider: <kind>` selects a provider directly, with the provider key
 * from `Authorization` (the gateway key then travels in `<prefix>api-key`).
 */
export async function routeRequest(input: {
  principal: Principal & { workspaceId: string };
  body: ChatBody;
  providerHeader: string | undefined;
  providerKey: string | undefined;
  integrations: IntegrationCache;
  headerPrefix: string;
  directProviders: ReadonlySet<string>;
}): Promise<RoutedRequest> {
  const { principal, providerHeader, headerPrefix } = input;
  let body = input.body;
  let bodyUnchanged = true;
  let slug: string | undefined;
  const modelMatch = INTEGRATION_MODEL.exec(body.model);
  if (modelMatch) {
    slug = modelMatch[1];
    body = { ...body, model: modelMatch[2]! };
    bodyUnchanged = false;
  }
  if (providerHeader?.startsWith('@')) slug = providerHeader.slice(1);

  if (slug) {
    const integration = await input.integrations.get(principal.organisationId, principal.workspaceId, slug);
    if (!integration)
      throw new NotFound(`Integration '${slug}' not found.`, {
        param: 'model',
        code: 'integration_not_found',
      });
    return {
      body,
      bodyUnchanged,
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
      body,
      bodyUnchanged,
      target: { provider: providerHeader, apiKey: input.providerKey ?? '', headers: {}, settings: {} },
    };
  }
  throw new BadRequest(
    `No provider selected: set the ${headerPrefix}provider header (e.g. "mock", "openai" or "@integration-slug"), ` +
      'or use a model of the form "@integration-slug/model".',
    { param: `${headerPrefix}provider`, code: 'provider_required' },
  );
}
