import { anthropic } from './anthropic.ts';
import { defineProvider, type ModelPrices } from './descriptor.ts';

export const bedrock = defineProvider({
  id: 'bedrock',
  name: 'Amazon Bedrock',
  family: 'bedrock',
  // SigV4 from the integration's AWS credentials; without them, its key (a Bedrock API key) as a bearer token.
  authKinds: ['aws-sigv4', 'bearer'],
  env: {},
  // `https://bedrock-runtime.{aws_region}.amazonaws.com`, from the integration's aws_region.
  defaultBaseUrl: undefined,
  // Anthropic's models at Anthropic's list prices, under Bedrock's model ids (`anthropic.<model>`).
  prices: Object.fromEntries(
    Object.entries(anthropic.prices).map(([model, price]) => [`anthropic.${model}`, price]),
  ) as ModelPrices,
});
