import { NO_PRICES, type ModelPrice } from './descriptor.ts';
import { providerDescriptor } from './registry.ts';

/**
 * The listed price of a provider's model, in USD per million tokens, by the longest listed
 * prefix of its name: dated variants (`gpt-4o-2024-08-06`), versions (`@`, `:`) and Bedrock's
 * cross-region ids (`us.anthropic...`) price as their family. Undefined when the provider is
 * not registered, lists no prices or does not list the model.
 */
export function listedPrice(provider: string, model: string): ModelPrice | undefined {
  const prices = providerDescriptor(provider)?.prices;
  if (!prices || prices === NO_PRICES) return undefined;
  const name = model.toLowerCase().replace(/^(us|eu|apac)\./, '');
  let best: string | undefined;
  for (const listed of Object.keys(prices)) {
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
  return best ? prices[best] : undefined;
}
