import { priceOf } from './prices.ts';

export interface TokenCounts {
  promptTokens: number;
  completionTokens: number;
  /** Prompt tokens read from the provider's cache: a part of promptTokens. */
  cachedTokens: number;
  reasoningTokens: number;
  /**
   * Prompt tokens written to the provider's cache: a part of promptTokens too, beside the
   * cached ones. Absent (none) where the usage does not tell them apart.
   */
  cacheWriteTokens?: number | undefined;
}

/** pricing_adjustments.multiplier of an integration; unset fields inherit `default`, else 1. */
export interface PricingMultiplier {
  default?: number | undefined;
  requestToken?: number | undefined;
  responseToken?: number | undefined;
  cacheReadInputToken?: number | undefined;
  cacheWriteInputToken?: number | undefined;
  reasoningToken?: number | undefined;
}

const PER_TOKEN = 1 / 1_000_000;

/**
 * The cost of one request in USD: uncached prompt tokens at the input price, cached ones at
 * the cached-input price, those written to the cache at the cache-write price (the input price
 * when none is listed), completion tokens at the output price (reasoning tokens, which are
 * part of them, at the reasoning price when the model has one), each times the multiplier of
 * its kind, or `default` when that one is unset. Zero when the model has no listed price.
 */
export function costOf(
  provider: string,
  model: string,
  tokens: TokenCounts,
  multiplier?: PricingMultiplier,
): number {
  const price = priceOf(provider, model);
  if (!price) return 0;
  const factor = (specific: number | undefined) => specific ?? multiplier?.default ?? 1;
  const cached = Math.min(tokens.cachedTokens, tokens.promptTokens);
  const written = Math.min(tokens.cacheWriteTokens ?? 0, tokens.promptTokens - cached);
  const reasoning = Math.min(tokens.reasoningTokens, tokens.completionTokens);
  const input = (tokens.promptTokens - cached - written) * price.input * factor(multiplier?.requestToken);
  const cachedInput = cached * (price.cachedInput ?? price.input) * factor(multiplier?.cacheReadInputToken);
  const cacheWrite =
    written * (price.cacheWriteInput ?? price.input) * factor(multiplier?.cacheWriteInputToken);
  const output = (tokens.completionTokens - reasoning) * price.output * factor(multiplier?.responseToken);
  const reasoningCost = reasoning * (price.reasoning ?? price.output) * factor(multiplier?.reasoningToken);
  return (input + cachedInput + cacheWrite + output + reasoningCost) * PER_TOKEN;
}
