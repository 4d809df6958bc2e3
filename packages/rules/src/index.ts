// `@switchyard/rules`: shared domain rules: routing configs, organisation settings, the unsafe-host
// check and the provider descriptors and registry.
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
export {
  type ConditionOperators,
  type ConditionQuery,
  DEFAULT_RETRY_STATUS_CODES,
  integrationSlugs,
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
