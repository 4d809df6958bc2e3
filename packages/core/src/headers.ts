/** HTTP header names (RFC 9110 tokens). */
export const HEADER_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * Headers a tenant may not set on a call the gateway makes for it (a webhook check's, a
 * model's custom headers): credentials of the caller, hop-by-hop and framing headers.
 */
const RESTRICTED_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'host',
  'content-length',
  'connection',
  'transfer-encoding',
  'te',
  'upgrade',
  'keep-alive',
]);

/** The gateway's own headers: `x-vendor-*` by default, and `x-switchyard-*`. */
const RESTRICTED_HEADER_PREFIXES = ['x-vendor-', 'x-switchyard-'];

/**
 * Why a tenant may not set a header of this name, or undefined if it may. `gatewayPrefix` is
 * the gateway's header prefix, refused too; `allowAuthorization` lets `authorization` through.
 */
export function headerNameProblem(
  name: string,
  gatewayPrefix: string | undefined,
  allowAuthorization = false,
): string | undefined {
  if (!HEADER_TOKEN.test(name)) return 'is not a valid HTTP header name';
  const lower = name.toLowerCase();
  if (RESTRICTED_HEADERS.has(lower) && !(allowAuthorization && lower === 'authorization'))
    return 'is a restricted header';
  const prefixes = gatewayPrefix
    ? [...RESTRICTED_HEADER_PREFIXES, gatewayPrefix.toLowerCase()]
    : RESTRICTED_HEADER_PREFIXES;
  const prefix = prefixes.find((p) => lower.startsWith(p));
  if (prefix !== undefined) return `is one of the gateway's own headers (${prefix}*)`;
  return undefined;
}
