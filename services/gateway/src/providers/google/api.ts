import { providerDescriptor } from '@switchyard/rules';
import type { ProviderTarget } from '../types.ts';

export const GEMINI_BASE_URL = providerDescriptor('google').defaultBaseUrl;

/** `generateContent`, or `streamGenerateContent` as server-sent events. */
export function generateUrl(target: ProviderTarget, model: string, stream: boolean): string {
  const base = (target.baseUrl ?? GEMINI_BASE_URL).replace(/\/+$/, '');
  const name = encodeURIComponent(model.replace(/^models\//, ''));
  return stream
    ? `${base}/models/${name}:streamGenerateContent?alt=sse`
    : `${base}/models/${name}:generateContent`;
}

export function headers(target: ProviderTarget): Record<string, string> {
  return {
    ...target.headers,
    'content-type': 'application/json',
    ...(target.apiKey ? { 'x-goog-api-key': target.apiKey } : {}),
  };
}
