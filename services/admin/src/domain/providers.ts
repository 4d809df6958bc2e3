import { z } from 'zod';
import { env } from '@switchyard/platform';

/** Provider kinds an integration may name, with the environment variable that can seed one in all-in-one mode. */
export const knownProviders = {
  openai: { envKey: 'OPENAI_API_KEY', envBaseUrl: 'OPENAI_BASE_URL' },
  'azure-openai': { envKey: 'AZURE_OPENAI_API_KEY', envBaseUrl: 'AZURE_OPENAI_ENDPOINT' },
  anthropic: { envKey: 'ANTHROPIC_API_KEY', envBaseUrl: 'ANTHROPIC_BASE_URL' },
  google: { envKey: 'GEMINI_API_KEY', envBaseUrl: undefined },
  bedrock: { envKey: undefined, envBaseUrl: undefined },
  groq: { envKey: 'GROQ_API_KEY', envBaseUrl: undefined },
  'mistral-ai': { envKey: 'MISTRAL_API_KEY', envBaseUrl: undefined },
  'together-ai': { envKey: 'TOGETHER_API_KEY', envBaseUrl: undefined },
  deepseek: { envKey: 'DEEPSEEK_API_KEY', envBaseUrl: undefined },
  'fireworks-ai': { envKey: 'FIREWORKS_API_KEY', envBaseUrl: undefined },
  openrouter: { envKey: 'OPENROUTER_API_KEY', envBaseUrl: undefined },
  ollama: { envKey: undefined, envBaseUrl: 'OLLAMA_BASE_URL' },
  vllm: { envKey: undefined, envBaseUrl: 'VLLM_BASE_URL' },
  'openai-compatible': { envKey: undefined, envBaseUrl: undefined },
  mock: { envKey: undefined, envBaseUrl: undefined },
} as const satisfies Record<string, { envKey: string | undefined; envBaseUrl: string | undefined }>;

export type ProviderId = keyof typeof knownProviders;
export const providerIds = Object.keys(knownProviders) as [ProviderId, ...ProviderId[]];

const seededKey = { description: 'each becomes a ready integration named after its provider' };
const baseUrlNotes: Record<string, string> = {
  ANTHROPIC_BASE_URL: ' (as the Anthropic SDK takes it: `/v1` is added when missing)',
};

/**
 * The variables all-in-one seeds integrations from (see IntegrationService.seedFromEnvironment
 * and seededBaseUrlHosts), for the configuration table: each API key, then the base URLs read
 * with them.
 */
export const seedEnvSchema = z.object(
  Object.fromEntries([
    ...Object.values(knownProviders).flatMap((source) =>
      source.envKey ? [[source.envKey, env.optionalString().meta(seededKey)]] : [],
    ),
    ...Object.values(knownProviders).flatMap((source) =>
      source.envKey && source.envBaseUrl
        ? [
            [
              source.envBaseUrl,
              env.optionalString().meta({
                description: `base URL of the integration created from \`${source.envKey}\`${baseUrlNotes[source.envBaseUrl] ?? ''}; its host is trusted as a custom host`,
              }),
            ],
          ]
        : [],
    ),
  ]),
);

/**
 * The hosts of the base URLs that integrations are seeded with in all-in-one mode: the
 * operator chose them, so they are trusted custom hosts.
 */
export function seededBaseUrlHosts(processEnv: NodeJS.ProcessEnv): string[] {
  const hosts: string[] = [];
  for (const source of Object.values(knownProviders)) {
    const key = source.envKey ? processEnv[source.envKey] : undefined;
    const baseUrl = source.envBaseUrl ? processEnv[source.envBaseUrl] : undefined;
    if (!key || !baseUrl || !URL.canParse(baseUrl)) continue;
    hosts.push(new URL(baseUrl).hostname.replace(/^\[|\]$/g, ''));
  }
  return hosts;
}
