import type { UpstreamHeaders } from '../providers/types.ts';

/**
 * The provider's response headers a client is given beside the gateway's own, on chat
 * completions and forwarded operations alike, answers and relayed errors: the provider's
 * request id and its rate-limit headers, so a client can quote the one to the provider and
 * back off by the others. Nothing else of the provider's head is passed (no cookies, no
 * framing, no server internals).
 */

/** The provider's request id, by family: OpenAI and Azure, Anthropic, Bedrock, Google. */
const REQUEST_ID_HEADERS = ['x-request-id', 'request-id', 'x-amzn-requestid', 'x-goog-request-id'];

/** Passed by exact name: Anthropic's request id (it names nothing of the gateway's) and the back-off a 429 asks for. */
const PASSED_NAMES = new Set(['request-id', 'retry-after', 'retry-after-ms']);

/** Passed by prefix: OpenAI's and Azure's `x-ratelimit-*`, Anthropic's `anthropic-ratelimit-*`. */
const PASSED_PREFIXES = ['x-ratelimit-', 'anthropic-ratelimit-'];

/** Bounds on what is passed: a longer value, an odd name or one past the count is dropped, never cut. */
const MAX_VALUE_LENGTH = 256;
const MAX_PASSED = 24;
const NAME = /^[a-z0-9][a-z0-9-]{0,63}$/;
const VALUE = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/**
 * The provider's headers as the client is to see them. The provider's request id is
 * `<prefix>provider-request-id` (the gateway's own is `x-request-id`); every other header
 * passed keeps its name unless the gateway sets one of that name on this answer (`gateway`:
 * its policy's `x-ratelimit-*`), in which case it is `<prefix>provider-<name>`.
 */
export function providerHeaders(
  upstream: UpstreamHeaders | undefined,
  prefix: string,
  gateway: Record<string, string>,
): Record<string, string> {
  const out: Record<string, string> = {};
  if (upstream === undefined) return out;
  for (const name of REQUEST_ID_HEADERS) {
    const value = valueOf(upstream[name]);
    if (value !== undefined) {
      out[`${prefix}provider-request-id`] = value;
      break;
    }
  }
  let passed = 0;
  for (const name in upstream) {
    if (passed >= MAX_PASSED) break;
    if (!passes(name)) continue;
    const value = valueOf(upstream[name]);
    if (value === undefined) continue;
    out[Object.hasOwn(gateway, name) ? `${prefix}provider-${name}` : name] = value;
    passed += 1;
  }
  return out;
}

function passes(name: string): boolean {
  if (!NAME.test(name)) return false;
  return PASSED_NAMES.has(name) || PASSED_PREFIXES.some((p) => name.startsWith(p));
}

/** A header's value when it is one short printable line; a repeated header is not passed. */
function valueOf(value: string | string[] | undefined): string | undefined {
  if (typeof value !== 'string') return undefined;
  return value.length <= MAX_VALUE_LENGTH && VALUE.test(value) ? value : undefined;
}
