// `@switchyard/rules`: shared domain rules: routing configs, organisation settings, the unsafe-host
// check, the provider descriptors, registry and listed prices, and the keys and periods of limit policies.
export {
  CALLER_KEYS,
  conditionKeysOf,
  GROUP_BY_KEYS,
  groupByKeysOf,
  isAnyGroupByKey,
  isConditionKey,
  isGroupByKey,
  isMetadataKey,
  LIMIT_TARGETS,
  type LimitTarget,
  type LimitType,
  MAX_PERIODIC_RESET_DAYS,
  PERIODIC_RESETS,
  type PeriodicReset,
  RATE_LIMIT_TYPES,
  RATE_UNITS,
  type RateLimitType,
  type RequestFacts,
  type RateUnit,
  USAGE_LIMIT_TYPES,
  type UsageLimitType,
} from './limits/keys.ts';
export {
  DAY_MS,
  HOUR_MS,
  MINUTE_MS,
  type Period,
  periodAt,
  type Schedule,
  usageSchedule,
  utcMidnight,
  WEEK_MS,
  WINDOW_MS,
} from './limits/periods.ts';
export { effectiveBlockInlineConfig } from './organisation-settings.ts';
export { type AuthKind, type ModelPrice, type ModelPrices, NO_PRICES } from './providers/descriptor.ts';
export {
  providerDescriptor,
  type ProviderFamily,
  type ProviderId,
  providerIds,
  providerRegistry,
  type RegisteredProvider,
} from './providers/registry.ts';
export { listedPrice } from './providers/prices.ts';
export { AZURE_TOKEN_AUTH_SETTINGS } from './providers/azure-openai.ts';
export {
  type ConditionOperators,
  type ConditionQuery,
  DEFAULT_RETRY_STATUS_CODES,
  integrationSlugs,
  namedGuardrails,
  nodePath,
  parseRoutingConfig,
  providerKinds,
  type RetrySettings,
  ROUTING_LIMITS,
  type RoutingConfig,
  type RoutingTarget,
} from './routing-config.ts';
export {
  checkCustomHost,
  type CustomHostInspection,
  customHostRefused,
  inspectCustomHost,
  isPublicAddress,
  isTrusted,
  type Resolver,
  systemResolver,
} from './unsafe-host.ts';
export { NonPublicAddress, publicAddressLookup } from './public-address-lookup.ts';
export { EXPORT_FIELDS, type ExportField, isExportField } from './export-fields.ts';
export {
  checkPartials,
  includedPartials,
  MAX_PARTIAL_DEPTH,
  MAX_RENDERED_CHARS,
  type PromptMessage,
  promptVariables,
  renderPrompt,
} from './prompt-template.ts';
