/**
 * List prices in USD per million tokens, by provider and model. A model matches the longest
 * listed prefix, so dated variants (`gpt-4o-2024-08-06`) price as their family. Reasoning
 * tokens are billed as output unless a model lists its own price for them.
 */
export interface ModelPrice {
  input: number;
  output: number;
  cachedInput?: number;
  cacheWriteInput?: number;
  reasoning?: number;
}

type PriceTable = Record<string, Record<string, ModelPrice>>;

const openai: Record<string, ModelPrice> = {
  'gpt-4o': { input: 2.5, output: 10, cachedInput: 1.25 },
  'gpt-4o-mini': { input: 0.15, output: 0.6, cachedInput: 0.075 },
  'gpt-4.1': { input: 2, output: 8, cachedInput: 0.5 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6, cachedInput: 0.1 },
  'gpt-4.1-nano': { input: 0.1, output: 0.4, cachedInput: 0.025 },
  'gpt-4-turbo': { input: 10, output: 30 },
  'gpt-3.5-turbo': { input: 0.5, output: 1.5 },
  o1: { input: 15, output: 60, cachedInput: 7.5 },
  'o1-mini': { input: 1.1, output: 4.4, cachedInput: 0.55 },
  'o3-mini': { input: 1.1, output: 4.4, cachedInput: 0.55 },
  'o4-mini': { input: 1.1, output: 4.4, cachedInput: 0.275 },
  'text-embedding-3-small': { input: 0.02, output: 0 },
  'text-embedding-3-large': { input: 0.13, output: 0 },
};

const anthropic: Record<string, ModelPrice> = {
  'claude-3-5-haiku': { input: 0.8, output: 4, cachedInput: 0.08, cacheWriteInput: 1 },
  'claude-3-5-sonnet': { input: 3, output: 15, cachedInput: 0.3, cacheWriteInput: 3.75 },
  'claude-3-7-sonnet': { input: 3, output: 15, cachedInput: 0.3, cacheWriteInput: 3.75 },
  'claude-sonnet-4': { input: 3, output: 15, cachedInput: 0.3, cacheWriteInput: 3.75 },
  'claude-3-opus': { input: 15, output: 75, cachedInput: 1.5, cacheWriteInput: 18.75 },
  'claude-opus-4': { input: 15, output: 75, cachedInput: 1.5, cacheWriteInput: 18.75 },
  'claude-3-haiku': { input: 0.25, output: 1.25, cachedInput: 0.03, cacheWriteInput: 0.3 },
};

const google: Record<string, ModelPrice> = {
  'gemini-1.5-flash': { input: 0.075, output: 0.3 },
  'gemini-1.5-pro': { input: 1.25, output: 5 },
  'gemini-2.0-flash': { input: 0.1, output: 0.4, cachedInput: 0.025 },
  'gemini-2.5-flash': { input: 0.3, output: 2.5, cachedInput: 0.075 },
  'gemini-2.5-pro': { input: 1.25, output: 10, cachedInput: 0.31 },
};

export const PRICES: PriceTable = {
  openai,
  'azure-openai': openai,
  anthropic,
  bedrock: Object.fromEntries(
    Object.entries(anthropic).map(([model, price]) => [`anthropic.${model}`, price]),
  ),
  google,
  mock: { mock: { input: 0, output: 0 } },
};

/** The price of a model, by the longest listed prefix of its name. */
export function priceOf(provider: string, model: string): ModelPrice | undefined {
  const models = PRICES[provider];
  if (!models) return undefined;
  const name = model.toLowerCase().replace(/^(us|eu|apac)\./, '');
  let best: string | undefined;
  for (const listed of Object.keys(models)) {
    if (
      (name === listed ||
        name.startsWith(`${listed}-`) ||
        name.startsWith(`${listed}@`) ||
        name.startsWith(`${listed}:`)) &&
      (!best || listed.length > best.length)
    ) {
      best = listed;
    }
  }
  return best ? models[best] : undefined;
}

/** Models listed for a provider, for the model catalogue. */
export function modelsOf(provider: string): string[] {
  return Object.keys(PRICES[provider] ?? {});
}
