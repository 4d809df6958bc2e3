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
