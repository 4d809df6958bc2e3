import type { EffectiveOrganisationSettings } from '../domain/organisation-settings.service.ts';
import type { ShownGuardrailDefaults } from '../domain/guardrail-defaults.service.ts';
import type { ModelPrice } from '@switchyard/rules';
import { SECRET_SETTINGS } from '../domain/integration.schemas.ts';
import type { ProviderDetail } from '../domain/provider-details.ts';
import type { ShownIntegrationModel } from '../domain/integration.service.ts';
import type { WorkspaceAccess } from '../store/integration.repository.ts';
import type { Integration, OrganisationEmailDomain, SsoConnection } from '../store/entities.ts';

export function presentIntegration(integration: Integration) {
  return {
    id: integration.id,
    slug: integration.slug,
    name: integration.name,
    description: integration.description,
    ai_provider_id: integration.provider,
    plugin_provider_id: integration.pluginProviderId,
    organisation_id: integration.organisationId,
    workspace_id: integration.workspaceId,
    status: integration.status,
    created_at: integration.createdAt.toISOString(),
    last_updated_at: integration.updatedAt.toISOString(),
    object: 'integration' as const,
  };
}

/**
 * Detail view: secrets only ever appear masked, secret settings under a `masked_` name, and
 * each credential of a plugin integration masked.
 */
export function presentIntegrationDetail(
  integration: Integration,
  maskedKey: string | null,
  maskedCredentials: Record<string, string> | null,
) {
  return {
    ...presentIntegration(integration),
    masked_key: maskedKey,
    credentials: maskedCredentials,
    configurations: maskedConfigurations(integration),
    pricing_adjustments: integration.pricingAdjustments,
  };
}

/** An integration's configurations with each secret setting (AWS, Azure Entra, OAuth) and header value masked. */
export function maskedConfigurations(integration: Integration): Record<string, unknown> {
  const { headers, ...rest } = integration.configurations;
  const configurations: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(rest)) {
    if ((SECRET_SETTINGS as readonly string[]).includes(name)) configurations[`masked_${name}`] = '****';
    else configurations[name] = value;
  }
  if (headers)
    configurations.headers = Object.fromEntries(Object.keys(headers).map((name) => [name, '****']));
  return configurations;
}

/** An integration's models (GET and PUT .../models); custom header values are not secrets and are shown. */
export function presentIntegrationModels(models: ShownIntegrationModel[]) {
  return {
    total: models.length,
    models: models.map((model) => ({
      slug: model.slug,
      name: model.slug,
      enabled: model.enabled,
      is_custom: model.is_custom,
      is_finetune: model.is_finetune,
      base_model_slug: model.base_model_slug,
      configurations: model.configurations,
      custom_headers: model.custom_headers,
    })),
  };
}

/**
 * Which workspaces may use an integration: each with a setting of its own, and the default of
 * all the others. Limits per workspace are not stored: always null.
 */
export function presentIntegrationWorkspaces(access: WorkspaceAccess) {
  return {
    total: access.workspaces.length,
    workspaces: access.workspaces.map((workspace) => ({
      id: workspace.workspaceId,
      enabled: workspace.enabled,
      usage_limits: null,
      rate_limits: null,
    })),
    global_workspace_access: { enabled: access.global, usage_limits: null, rate_limits: null },
  };
}

export function presentOrganisationSettings(settings: EffectiveOrganisationSettings) {
  return {
    block_inline_config: settings.blockInlineConfig,
    block_inline_config_source: settings.blockInlineConfigSource,
    user_api_key_auto_create: settings.keys.userApiKeyAutoCreate ?? false,
    default_workspace_user_api_key_auto_create: settings.keys.defaultWorkspaceUserApiKeyAutoCreate ?? null,
    user_api_key_auto_create_scopes: settings.keys.userApiKeyAutoCreateScopes ?? null,
    user_api_key_rotation_period: settings.keys.userApiKeyRotationPeriod ?? null,
    workspace_security_settings_override: settings.keys.workspaceSecuritySettingsOverride ?? [],
    export_settings: { deniedFields: settings.exportDeniedFields },
  };
}

export function presentGuardrailDefaults(defaults: ShownGuardrailDefaults) {
  return { input_guardrails: defaults.input, output_guardrails: defaults.output };
}

/** The client secret only ever appears masked (null when the method takes none). */
export function presentSsoConnection(connection: SsoConnection, maskedClientSecret: string | null) {
  return {
    object: 'sso_connection' as const,
    type: 'oidc' as const,
    client_id: connection.clientId,
    enabled: connection.enabled,
    issuer: connection.issuer,
    token_endpoint_auth_method: connection.tokenEndpointAuthMethod,
    masked_client_secret: maskedClientSecret,
    jwks: connection.jwks,
    scopes: connection.scopes,
    disable_auto_provision_user: connection.disableAutoProvisionUser,
    created_at: connection.createdAt.toISOString(),
    last_updated_at: connection.updatedAt.toISOString(),
  };
}

export function presentEmailDomain(claim: OrganisationEmailDomain) {
  return {
    object: 'organisation_email_domain' as const,
    id: claim.id,
    domain: claim.domain,
    allow_subdomains: claim.allowSubdomains,
    created_at: claim.createdAt.toISOString(),
  };
}

export function presentProviderDetail(detail: ProviderDetail) {
  return {
    id: detail.id,
    name: detail.name,
    provider_auth_types: detail.authKinds,
    /** What an integration's configurations.provider_auth_type may be. */
    integration_auth_types: detail.authTypes,
    default_base_url: detail.defaultBaseUrl,
    configurations: detail.configurations.map((field) => ({
      name: field.name,
      secret: field.secret,
      description: field.description,
    })),
    priced_models: detail.pricedModels,
    object: 'provider' as const,
  };
}

/** USD per million tokens, as the registry lists prices, to USD cents per token, as the pricing API answers. */
const centsPerToken = (usdPerMillion: number) => ({ price: usdPerMillion / 10_000 });

/**
 * A model's price as the gateway charges it: prompt tokens at the input price, cached ones at
 * the cached-input price (the input price when none is listed), completion tokens at the output
 * price, and reasoning tokens at their own price when the model lists one.
 */
export function presentModelPricing(price: ModelPrice) {
  return {
    pay_as_you_go: {
      request_token: centsPerToken(price.input),
      response_token: centsPerToken(price.output),
      cache_read_input_token: centsPerToken(price.cachedInput ?? price.input),
      ...(price.reasoning === undefined
        ? {}
        : { additional_units: { thinking_token: centsPerToken(price.reasoning) } }),
    },
    currency: 'USD' as const,
  };
}
