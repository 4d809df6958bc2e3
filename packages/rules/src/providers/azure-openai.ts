import { defineProvider } from './descriptor.ts';
import { openAi } from './openai.ts';

export const azureOpenAi = defineProvider({
  id: 'azure-openai',
  name: 'Azure OpenAI',
  family: 'azure-openai',
  authKinds: ['api-key'],
  env: { apiKey: 'AZURE_OPENAI_API_KEY', baseUrl: 'AZURE_OPENAI_ENDPOINT' },
  // `https://{resource_name}.openai.azure.com`, from the integration's resource_name.
  defaultBaseUrl: undefined,
  // Azure deployments serve OpenAI's models at OpenAI's list prices.
  prices: openAi.prices,
});

/**
 * The settings an Azure OpenAI integration authenticates with when it sends a bearer token in
 * place of its key (`provider_auth_type` oauthClientCredentials or wif, `azure_auth_mode`
 * entra): admin takes and describes them, the gateway fetches its tokens with them.
 */
export const AZURE_TOKEN_AUTH_SETTINGS = [
  'provider_auth_type',
  'oauth_token_endpoint',
  'oauth_client_id',
  'oauth_client_secret',
  'oauth_scope',
  'wif_token_endpoint',
  'wif_audience',
  'wif_scope',
  'azure_auth_mode',
  'azure_entra_tenant_id',
  'azure_entra_client_id',
  'azure_entra_client_secret',
  'azure_authority_host',
] as const;
