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
