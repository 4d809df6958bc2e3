/**
 * What Switchyard knows about a provider apart from how to talk to it: the data that the
 * gateway (adapter lookup, prices, default hosts), admin (`ai_provider_id` validation) and
 * all-in-one (integrations seeded from the environment) share.
 *
 * Why here and not beside the adapters: admin and all-in-one need this data but must not load
 * the gateway's adapter code (undici, SigV4 signing, wire translations), and admin cannot
 * depend on the gateway package (the gateway's tests depend on admin). Platform is the one
 * package both already depend on, so the data lives here, one file per provider family, and
 * the gateway attaches an adapter to each family by name (services/gateway/src/providers).
 */

/**
 * List prices in USD per million tokens. Reasoning tokens are billed as output unless a model
 * lists its own price for them.
 */
export interface ModelPrice {
  input: number;
  output: number;
  cachedInput?: number;
  cacheWriteInput?: number;
  reasoning?: number;
}

/**
 * A provider's prices by model name. A model matches the longest listed prefix, so dated
 * variants (`gpt-4o-2024-08-06`) price as their family.
 */
export type ModelPrices = Readonly<Record<string, Readonly<ModelPrice>>>;

/** Said explicitly by a provider that lists no prices: its requests cost 0 in usage records. */
export const NO_PRICES = 'none';

/**
 * How a provider takes its credentials:
 *   bearer          `Authorization: Bearer <key>`
 *   api-key         Azure's `api-key: <key>`
 *   x-api-key       Anthropic's `x-api-key: <key>`
 *   x-goog-api-key  Gemini's `x-goog-api-key: <key>`
 *   aws-sigv4       AWS Signature V4 from the integration's AWS credentials
 *   none            no credential (a local host, or no upstream at all)
 */
export type AuthKind = 'bearer' | 'api-key' | 'x-api-key' | 'x-goog-api-key' | 'aws-sigv4' | 'none';

/** The environment variables all-in-one seeds an integration of this provider from. */
export interface ProviderEnv {
  /** The API key; when it is set, all-in-one creates an integration named after the provider. */
  readonly apiKey?: string;
  /** The base URL read with the key (only when there is a key); its host is trusted as a custom host. */
  readonly baseUrl?: string;
  /** Added to the base URL's description in the configuration table. */
  readonly baseUrlNote?: string;
  /** The integration's custom_host for a base URL given in the environment, when it is not the URL itself. */
  apiRoot?(baseUrl: string): string;
}

export interface ProviderDescriptor {
  /** The id integrations name (`ai_provider_id`) and requests choose (`<prefix>provider`). */
  readonly id: string;
  readonly name: string;
  /**
   * The adapter family that serves it: the gateway's folder under src/providers, and the fake
   * upstream the adapter conformance tests run against.
   */
  readonly family: string;
  /** How the gateway may authenticate to it; `none` when it may send no credential at all. */
  readonly authKinds: readonly AuthKind[];
  readonly env: ProviderEnv;
  /** Where requests go unless the integration sets a custom_host; none: derived from settings, or a custom_host is required. */
  readonly defaultBaseUrl: string | undefined;
  readonly prices: ModelPrices | typeof NO_PRICES;
}

/**
 * A descriptor, checked against ProviderDescriptor, that keeps the literal types of its id,
 * family and default base URL (the registry's ids are a union type; adapters read their default).
 */
export function defineProvider<
  const Id extends string,
  const Family extends string,
  const BaseUrl extends string | undefined,
>(
  descriptor: ProviderDescriptor & { id: Id; family: Family; defaultBaseUrl: BaseUrl },
): ProviderDescriptor & { readonly id: Id; readonly family: Family; readonly defaultBaseUrl: BaseUrl } {
  return descriptor;
}
