import { providerDescriptor } from '@switchyard/rules';
import type { ProviderTarget } from '../types.ts';

export const ANTHROPIC_BASE_URL = providerDescriptor('anthropic').defaultBaseUrl;
export const ANTHROPIC_VERSION = '2023-06-01';

export function messagesUrl(target: ProviderTarget): string {
  return `${(target.baseUrl ?? ANTHROPIC_BASE_URL).replace(/\/+$/, '')}/messages`;
}

/** The integration's own headers may add `anthropic-beta` flags or pin another `anthropic-version`. */
export function headers(target: ProviderTarget): Record<string, string> {
  return {
    'anthropic-version': ANTHROPIC_VERSION,
    ...target.headers,
    'content-type': 'application/json',
    ...(target.apiKey ? { 'x-api-key': target.apiKey } : {}),
  };
}

/**
 * The head of a Messages request passed through: the client's `anthropic-version` over the
 * integration's (or the default), and the `anthropic-beta` flags of both, the integration's first.
 */
export function passThroughHeaders(
  target: ProviderTarget,
  version: string | undefined,
  beta: string | undefined,
): Record<string, string> {
  const sent = headers(target);
  if (version) sent['anthropic-version'] = version;
  const flags = [sent['anthropic-beta'], beta]
    .flatMap((value) => (value ?? '').split(','))
    .map((flag) => flag.trim())
    .filter((flag) => flag !== '');
  if (flags.length > 0) sent['anthropic-beta'] = [...new Set(flags)].join(',');
  return sent;
}
