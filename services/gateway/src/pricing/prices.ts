import {
  NO_PRICES,
  listedPrice,
  providerRegistry,
  type ModelPrice,
  type ModelPrices,
} from '@switchyard/rules';

export type { ModelPrice };

/**
 * List prices in USD per million tokens, by provider and model: each registered provider's own
 * (packages/rules/src/providers), except those that list none. A model matches the longest
 * listed prefix, so dated variants (`gpt-4o-2024-08-06`) price as their family. Reasoning
 * tokens are billed as output unless a model lists its own price for them.
 */
export const PRICES: Record<string, ModelPrices> = Object.fromEntries(
  providerRegistry.flatMap((provider) =>
    provider.prices === NO_PRICES ? [] : [[provider.id, provider.prices]],
  ),
);

/** Prices found by provider and model: every request prices its estimate, and most name a few models. */
const found = new Map<string, ModelPrice | null>();
const MAX_FOUND = 10_000;

/** The price of a model, by the longest listed prefix of its name (see listedPrice). */
export function priceOf(provider: string, model: string): ModelPrice | undefined {
  const key = `${provider}\u0000${model}`;
  let price = found.get(key);
  if (price === undefined) {
    price = listedPrice(provider, model) ?? null;
    if (found.size >= MAX_FOUND) found.clear();
    found.set(key, price);
  }
  return price ?? undefined;
}

/** Models listed for a provider, for the model catalogue. */
export function modelsOf(provider: string): string[] {
  return Object.keys(PRICES[provider] ?? {});
}
