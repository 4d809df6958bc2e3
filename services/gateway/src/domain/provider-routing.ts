import { BadRequest, Forbidden, NotFound, NotImplemented, type Principal } from '@switchyard/platform';
import type { GatewayHeaders } from '../http/gateway-headers.ts';
import type { ProviderTarget } from '../providers/types.ts';
import type { IntegrationCache } from './integration-cache.ts';
import { checkCustomHost, type Resolver } from './unsafe-host.ts';

export interface RoutedTarget {
  target: ProviderTarget;
  /** The model to send upstream: without its `@integration/` prefix. */
  model: string | undefined;
  /** True when the model had to change, so the client's bytes cannot be forwarded as they are. */
  modelRewritten: boolean;
}

/** How far a request may configure its own routing. */
export interface InlinePolicy {
  /** BLOCK_INLINE_CONFIG: only saved resources may choose the provider, host or config. */
  blockInlineConfig: boolean;
  trustedCustomHosts: readonly string[];
  resolve: Resolver;
}

export interface RoutingInput {
  principal: Principal & { workspaceId: string };
  /** The request's model, when it has one. */
  model: string | undefined;
  headers: Pick<GatewayHeaders, 'provider' | 'customHost' | 'config'>;
  inline: InlinePolicy;
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
  const { principal, headerPrefix } = input;
  const providerHeader = input.headers.provider;
  refuseBlockedInlineChoices(input);
  if (input.headers.config !== undefined) {
    throw new NotImplemented('Inline configs are not supported in this release; use a saved integration.', {
      param: `${headerPrefix}config`,
      code: 'inline_config_not_supported',
    });
  }
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
    if (input.headers.customHost !== undefined) {
      throw new BadRequest('A custom host applies only to a provider chosen inline, not to an integration.', {
        param: `${headerPrefix}custom-host`,
      });
    }
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
        pricing: integration.pricing,
      },
    };
  }
  if (providerHeader) {
    if (!input.directProviders.has(providerHeader)) {
      throw new BadRequest(`Unknown provider '${providerHeader}'.`, { param: `${headerPrefix}provider` });
    }
    const customHost = input.headers.customHost;
    const baseUrl = customHost
      ? (
          await checkCustomHost(customHost, {
            trusted: input.inline.trustedCustomHosts,
            resolve: input.inline.resolve,
            param: `${headerPrefix}custom-host`,
          })
        ).href.replace(/\/+$/, '')
      : undefined;
    return {
      model,
      modelRewritten,
      target: {
        provider: providerHeader,
        apiKey: input.providerKey ?? '',
        baseUrl,
        headers: {},
        settings: {},
      },
    };
  }
  throw new BadRequest(
    `No provider selected: set the ${headerPrefix}provider header (e.g. "mock", "openai" or "@integration-slug"), ` +
      'or use a model of the form "@integration-slug/model".',
    { param: `${headerPrefix}provider`, code: 'provider_required' },
  );
}

/** With BLOCK_INLINE_CONFIG on, a request may not choose its provider, host or config itself. */
function refuseBlockedInlineChoices(input: RoutingInput): void {
  if (!input.inline.blockInlineConfig) return;
  const { provider, customHost, config } = input.headers;
  const inline: Array<[string, boolean]> = [
    ['provider', provider !== undefined && !provider.startsWith('@')],
    ['custom-host', customHost !== undefined],
    ['config', config !== undefined],
  ];
  const chosen = inline.find(([, present]) => present);
  if (chosen) {
    const header = `${input.headerPrefix}${chosen[0]}`;
    throw new Forbidden(
      `Inline configuration is blocked for this gateway: ${header} may not be set; use a saved integration instead.`,
      { param: header, code: 'inline_config_blocked' },
    );
  }
}
