import { BadRequest, Forbidden, NotFound, headerNameProblem } from '@switchyard/core';
import { customHostRefused, inspectCustomHost, type RoutingTarget } from '@switchyard/rules';
import type { Principal } from '@switchyard/access';
import { isInlineConfig } from '../routing/config-source.ts';
import type { ProviderTarget } from '../providers/types.ts';
import type { GatewayHeaders } from './gateway-headers.ts';
import type { IntegrationSource } from './ports.ts';

export interface RoutedTarget {
  target: ProviderTarget;
  /** The model to send upstream: without its `@integration/` prefix. */
  model: string | undefined;
  /** True when the model had to change, so the client's bytes cannot be forwarded as they are. */
  modelRewritten: boolean;
}

/** How far a request may configure its own routing. */
export interface InlinePolicy {
  /**
   * block_inline_config for the caller's organisation (or BLOCK_INLINE_CONFIG): only saved
   * resources may choose the provider, host or config.
   */
  blockInlineConfig: (principal: Principal) => Promise<boolean>;
  trustedCustomHosts: readonly string[];
}

export interface RoutingInput {
  principal: Principal & { workspaceId: string };
  /** The request's model, when it has one. */
  model: string | undefined;
  headers: Pick<GatewayHeaders, 'provider' | 'customHost'>;
  inline: InlinePolicy;
  providerKey: string | undefined;
  integrations: IntegrationSource;
  headerPrefix: string;
  directProviders: { has(provider: string): boolean };
}

const INTEGRATION_MODEL = /^@([a-zA-Z0-9_-]{1,63})\/(.+)$/;

/**
 * Chooses the provider of one attempt. A config leaf that names `@slug` (or `virtual_key`)
 * or a provider kind decides; otherwise the request does: `<prefix>provider: @slug` or a
 * model `@slug/model` selects a saved integration, `<prefix>provider: <kind>` a provider
 * directly, with the provider key from `Authorization` (the gateway key then travels in
 * `<prefix>api-key`).
 */
export async function routeRequest(
  input: RoutingInput,
  leaf: RoutingTarget = {},
  leafPath = 'config',
): Promise<RoutedTarget> {
  const { headerPrefix } = input;
  let model = input.model;
  let slug: string | undefined;
  const modelMatch = model === undefined ? null : INTEGRATION_MODEL.exec(model);
  if (modelMatch) {
    slug = modelMatch[1];
    model = modelMatch[2]!;
  }
  const modelRewritten = model !== input.model;
  const leafSlug = leaf.virtual_key ?? (leaf.provider?.startsWith('@') ? leaf.provider.slice(1) : undefined);
  if (leafSlug) {
    const param = `${leafPath}.${leaf.virtual_key ? 'virtual_key' : 'provider'}`;
    return { model, modelRewritten, target: await integrationTarget(input, leafSlug, param, model) };
  }
  if (leaf.provider) {
    return {
      model,
      modelRewritten,
      target: directTarget(input, leaf.provider, {
        apiKey: leaf.api_key,
        customHost: leaf.custom_host,
        providerParam: `${leafPath}.provider`,
        hostParam: `${leafPath}.custom_host`,
      }),
    };
  }
  const providerHeader = input.headers.provider;
  if (providerHeader?.startsWith('@')) slug = providerHeader.slice(1);
  if (slug) {
    if (input.headers.customHost !== undefined) {
      throw new BadRequest('A custom host applies only to a provider chosen inline, not to an integration.', {
        param: `${headerPrefix}custom-host`,
      });
    }
    return { model, modelRewritten, target: await integrationTarget(input, slug, 'model', model) };
  }
  if (providerHeader) {
    return {
      model,
      modelRewritten,
      target: directTarget(input, providerHeader, {
        apiKey: undefined,
        customHost: input.headers.customHost,
        providerParam: `${headerPrefix}provider`,
        hostParam: `${headerPrefix}custom-host`,
      }),
    };
  }
  throw new BadRequest(
    `No provider selected: set the ${headerPrefix}provider header (e.g. "mock", "openai" or "@integration-slug"), ` +
      'use a model of the form "@integration-slug/model", or a config that names a provider.',
    { param: `${headerPrefix}provider`, code: 'provider_required' },
  );
}

/**
 * A saved integration's target. A model set on the integration with settings of its own goes
 * to its custom host instead of the integration's, with its custom headers added; a model set
 * as disabled, or an integration the workspace is denied, is refused.
 */
async function integrationTarget(
  input: RoutingInput,
  slug: string,
  param: string,
  model: string | undefined,
): Promise<ProviderTarget> {
  const { principal } = input;
  const integration = await input.integrations.get(principal.organisationId, principal.workspaceId, slug);
  if (!integration) {
    throw new NotFound(`Integration '${slug}' not found.`, { param, code: 'integration_not_found' });
  }
  if ('workspaceDenied' in integration) {
    throw new Forbidden(
      `This workspace may not use integration '${slug}': the organisation has not granted it access.`,
      { param, code: 'integration_workspace_denied' },
    );
  }
  const own = model === undefined ? undefined : integration.models.get(model);
  // A model set as disabled is refused as an unknown integration is: not found, naming the model.
  if (own && !own.enabled) {
    throw new NotFound(`Model '${model}' of integration '${slug}' is disabled.`, {
      param,
      code: 'model_disabled',
    });
  }
  const modelHost = own?.customHost;
  if (modelHost?.refused !== undefined) {
    throw customHostRefused(
      `${modelHost.refused} (the custom_host of model '${model}' of integration '${slug}')`,
      'custom_host',
    );
  }
  const host = modelHost ?? integration.customHost;
  if (host?.refused !== undefined) {
    throw customHostRefused(`${host.refused} (the custom_host of integration '${slug}')`, 'custom_host');
  }
  return {
    provider: integration.provider,
    apiKey: integration.apiKey,
    baseUrl: modelHost ? modelHost.url.href.replace(/\/+$/, '') : integration.baseUrl,
    untrustedHostParam: host && !host.trusted ? 'custom_host' : undefined,
    headers: own
      ? withModelHeaders(integration.headers, own.customHeaders, input.headerPrefix)
      : integration.headers,
    settings: integration.settings,
    integrationSlug: integration.slug,
    integrationId: integration.id,
    pricing: integration.pricing,
  };
}

/**
 * Headers that carry a provider's credentials: a model's custom headers never take their
 * place (the providers set their own after the target's headers, by these lower-case names).
 */
const CREDENTIAL_HEADERS = new Set([
  'authorization',
  'x-api-key',
  'api-key',
  'x-goog-api-key',
  'content-type',
]);

/**
 * The integration's headers with the model's added, by lower-case name so that the provider's
 * credentials, set afterwards, replace rather than join them. A name admin would not have
 * accepted (a restricted header or one of the gateway's own) is left out.
 */
function withModelHeaders(
  integrationHeaders: Record<string, string>,
  modelHeaders: Record<string, string>,
  headerPrefix: string,
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(integrationHeaders)) headers[name.toLowerCase()] = value;
  for (const [name, value] of Object.entries(modelHeaders)) {
    const lower = name.toLowerCase();
    if (CREDENTIAL_HEADERS.has(lower) || headerNameProblem(name, headerPrefix) !== undefined) continue;
    headers[lower] = value;
  }
  return headers;
}

/**
 * A provider chosen by kind: the key from the config or the request. A custom host passes the
 * unsafe-host check's rules that need no lookup here; its addresses are checked as the
 * connection resolves it (see publicAddressLookup), with no lookup of its own.
 */
function directTarget(
  input: RoutingInput,
  provider: string,
  options: {
    apiKey: string | undefined;
    customHost: string | undefined;
    providerParam: string;
    hostParam: string;
  },
): ProviderTarget {
  if (!input.directProviders.has(provider)) {
    throw new BadRequest(`Unknown provider '${provider}'.`, { param: options.providerParam });
  }
  const apiKey = options.apiKey ?? input.providerKey ?? '';
  if (!options.customHost) return { provider, apiKey, headers: {}, settings: {} };
  const host = inspectCustomHost(options.customHost, input.inline.trustedCustomHosts);
  if (host.refused !== undefined) throw customHostRefused(host.refused, options.hostParam);
  return {
    provider,
    apiKey,
    baseUrl: host.url.href.replace(/\/+$/, ''),
    untrustedHostParam: host.trusted ? undefined : options.hostParam,
    headers: {},
    settings: {},
  };
}

/**
 * With block_inline_config on, a request may not choose its provider, host or config
 * itself; saved integrations and saved configs still work. The setting is only looked up
 * when the request makes such a choice.
 */
export async function refuseBlockedInlineChoices(
  principal: Principal,
  headers: Pick<GatewayHeaders, 'provider' | 'customHost' | 'config'>,
  inline: InlinePolicy,
  headerPrefix: string,
): Promise<void> {
  const { provider, customHost, config } = headers;
  const choices: Array<[string, boolean]> = [
    ['provider', provider !== undefined && !provider.startsWith('@')],
    ['custom-host', customHost !== undefined],
    ['config', config !== undefined && isInlineConfig(config)],
  ];
  const chosen = choices.find(([, present]) => present);
  if (!chosen || !(await inline.blockInlineConfig(principal))) return;
  const header = `${headerPrefix}${chosen[0]}`;
  throw new Forbidden(
    `Inline configuration is blocked for this organisation: ${header} may not choose a provider, host or config; use a saved integration or config instead.`,
    { param: header, code: 'inline_config_blocked' },
  );
}
