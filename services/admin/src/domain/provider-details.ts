import { Forbidden, NotFound } from '@switchyard/core';
import {
  AZURE_TOKEN_AUTH_SETTINGS,
  listedPrice,
  providerDescriptor,
  providerRegistry,
  type AuthKind,
  type ModelPrice,
  type ProviderFamily,
  type RegisteredProvider,
} from '@switchyard/rules';
import type { IntegrationConfigurations } from '../store/entities.ts';
import {
  DEFAULT_AZURE_AUTHORITY_HOST,
  DEFAULT_OAUTH_SCOPE,
  SECRET_SETTINGS,
  providerAuthTypes,
  type ProviderAuthType,
} from './integration.schemas.ts';

/**
 * What an integration of each provider kind takes, for clients that build integration forms:
 * the provider registry's descriptors (packages/rules), with the settings the gateway's adapter
 * of each family reads.
 */

/** A setting an integration may hold: `key` (the provider key) or one of its configurations. */
export type ConfigurationField = 'key' | keyof IntegrationConfigurations;

const FIELD_DESCRIPTIONS: Readonly<Record<ConfigurationField, string>> = {
  key: 'The provider key, sent as the provider expects it.',
  custom_host: 'Where requests go instead of the default base URL (checked by the unsafe-host check).',
  headers: 'Extra headers sent upstream; their values are stored encrypted.',
  api_version: 'The Azure OpenAI API version.',
  resource_name:
    'The Azure resource: requests go to https://{resource_name}.openai.azure.com unless custom_host is set.',
  deployment: 'The Azure deployment; without it the request model names the deployment.',
  aws_region: 'The AWS region of the Bedrock Runtime endpoint and of the request signatures.',
  aws_access_key_id: 'The AWS access key id requests are signed with.',
  aws_secret_access_key: 'The AWS secret access key requests are signed with.',
  aws_session_token: 'The session token of temporary AWS credentials.',
  provider_auth_type:
    'How requests authenticate: apiKey (the default) sends the key; oauthClientCredentials and wif send a bearer token the gateway fetches.',
  oauth_token_endpoint:
    'oauthClientCredentials: the OAuth token endpoint the client credentials are sent to (checked by the unsafe-host check).',
  oauth_client_id: 'oauthClientCredentials: the OAuth client id.',
  oauth_client_secret: 'oauthClientCredentials: the OAuth client secret.',
  oauth_scope: `oauthClientCredentials: the scope asked for (default ${DEFAULT_OAUTH_SCOPE}).`,
  wif_token_endpoint:
    'wif: the security token service the gateway exchanges its workload identity token at (RFC 8693; checked by the unsafe-host check).',
  wif_audience: 'wif: the audience asked for in the token exchange.',
  wif_scope: `wif: the scope asked for in the token exchange (default ${DEFAULT_OAUTH_SCOPE}).`,
  azure_auth_mode:
    'How requests authenticate, as the reference names it: default sends the key (or follows provider_auth_type); entra sends a bearer token the gateway gets from Entra ID; managed is not supported.',
  azure_entra_tenant_id:
    'entra: the Entra tenant, by its id (a GUID) or a domain name such as contoso.onmicrosoft.com.',
  azure_entra_client_id: 'entra: the client id of the app registration.',
  azure_entra_client_secret: 'entra: the client secret of the app registration.',
  azure_authority_host: `entra: the Entra authority for a national cloud (default ${DEFAULT_AZURE_AUTHORITY_HOST}; checked by the unsafe-host check).`,
};

/** The settings only one family's adapter reads, after custom_host and headers, which every upstream takes. */
const FAMILY_SETTINGS: Readonly<Record<ProviderFamily, readonly ConfigurationField[]>> = {
  openai: [],
  'azure-openai': ['resource_name', 'deployment', 'api_version', ...AZURE_TOKEN_AUTH_SETTINGS],
  anthropic: [],
  google: [],
  bedrock: ['aws_region', 'aws_access_key_id', 'aws_secret_access_key', 'aws_session_token'],
  'openai-compatible': [],
  // No upstream: nothing to configure.
  mock: [],
};

/** The auth kinds that send the integration's key (`aws-sigv4` signs with AWS credentials, `none` sends nothing). */
const KEY_AUTH_KINDS: readonly AuthKind[] = ['bearer', 'api-key', 'x-api-key', 'x-goog-api-key'];

/** Header values and the provider key are credentials, like the secret settings: stored encrypted, shown masked. */
function isSecret(field: ConfigurationField): boolean {
  return field === 'key' || field === 'headers' || (SECRET_SETTINGS as readonly string[]).includes(field);
}

export interface ProviderConfigurationField {
  name: ConfigurationField;
  secret: boolean;
  description: string;
}

export interface ProviderDetail {
  id: string;
  name: string;
  authKinds: readonly AuthKind[];
  /** The values `configurations.provider_auth_type` may take for this kind. */
  authTypes: readonly ProviderAuthType[];
  defaultBaseUrl: string | null;
  configurations: ProviderConfigurationField[];
  /** The models the gateway lists prices for (see `modelPricing`); empty when it charges 0 for every model. */
  pricedModels: string[];
}

function detailOf(provider: RegisteredProvider): ProviderDetail {
  const fields: ConfigurationField[] = [
    ...(provider.authKinds.some((kind) => KEY_AUTH_KINDS.includes(kind)) ? (['key'] as const) : []),
    ...(provider.family === 'mock' ? [] : (['custom_host', 'headers'] as const)),
    ...FAMILY_SETTINGS[provider.family],
  ];
  return {
    id: provider.id,
    name: provider.name,
    authKinds: provider.authKinds,
    authTypes: providerAuthTypes(provider.id),
    defaultBaseUrl: provider.defaultBaseUrl ?? null,
    configurations: fields.map((name) => ({
      name,
      secret: isSecret(name),
      description: FIELD_DESCRIPTIONS[name],
    })),
    pricedModels: typeof provider.prices === 'string' ? [] : Object.keys(provider.prices),
  };
}

/** Every provider kind an integration may name, in the registry's order. */
export function providerDetails(): ProviderDetail[] {
  return providerRegistry.map(detailOf);
}

/** One provider kind, by the id integrations name (`ai_provider_id`). */
export function providerDetail(id: string): ProviderDetail {
  const provider = providerDescriptor(id);
  if (!provider) throw new NotFound(`Provider '${id}' not found.`, { param: 'provider' });
  return detailOf(provider);
}

/**
 * `include_configurations=true` is for another Switchyard service only, calling with its system
 * token (http/system-auth.ts); every other caller (API key, JWT, OAuth token or session) is
 * refused with this.
 */
export function refuseIncludedConfigurations(): never {
  throw new Forbidden(
    'include_configurations=true is for system (service-to-service) authentication only; API keys, JWTs, OAuth tokens and sessions may not ask for it.',
    { param: 'include_configurations', code: 'system_auth_required' },
  );
}

/**
 * The price the gateway charges for a model: the registry's listed price, matched as the
 * gateway's cost computation matches it. Unregistered providers, providers that list no prices
 * and unlisted models are not found: the gateway records their requests at cost 0.
 */
export function modelPricing(provider: string, model: string): ModelPrice {
  const descriptor = providerDescriptor(provider);
  if (!descriptor) throw new NotFound(`Provider '${provider}' not found.`, { param: 'provider' });
  const price = listedPrice(provider, model);
  if (!price) {
    throw new NotFound(
      `No price is listed for model '${model}' of provider '${provider}': the gateway records its requests at cost 0.`,
      { param: 'model' },
    );
  }
  return price;
}
