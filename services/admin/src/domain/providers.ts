import { z } from 'zod';
import { env } from '@switchyard/core';
import { providerIds, providerRegistry, type ProviderId } from '@switchyard/rules';

/** The provider ids an integration may name (`ai_provider_id`): the registry's, in its order. */
export { providerIds, type ProviderId };

const seededKey = { description: 'each becomes a ready integration named after its provider' };

/**
 * The variables all-in-one seeds integrations from (see IntegrationService.seedFromEnvironment
 * and seededBaseUrlHosts), for the configuration table: each API key, then the base URLs read
 * with them.
 */
export const seedEnvSchema = z.object(
  Object.fromEntries([
    ...providerRegistry.flatMap(({ env: source }) =>
      source.apiKey ? [[source.apiKey, env.optionalString().meta(seededKey)]] : [],
    ),
    ...providerRegistry.flatMap(({ env: source }) =>
      source.apiKey && source.baseUrl
        ? [
            [
              source.baseUrl,
              env.optionalString().meta({
                description: `base URL of the integration created from \`${source.apiKey}\`${source.baseUrlNote ?? ''}; its host is trusted as a custom host`,
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
  for (const { env: source } of providerRegistry) {
    const key = source.apiKey ? processEnv[source.apiKey] : undefined;
    const baseUrl = source.baseUrl ? processEnv[source.baseUrl] : undefined;
    if (!key || !baseUrl || !URL.canParse(baseUrl)) continue;
    hosts.push(new URL(baseUrl).hostname.replace(/^\[|\]$/g, ''));
  }
  return hosts;
}
