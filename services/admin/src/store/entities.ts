import { EntitySchema } from 'typeorm';

export const SCHEMA = 'admin';

export type IntegrationStatus = 'active' | 'archived';

/** Provider settings. Header values and the secret settings (domain/integration.schemas.ts) are stored encrypted. */
export interface IntegrationConfigurations {
  custom_host?: string;
  headers?: Record<string, string>;
  /** Azure OpenAI */
  api_version?: string;
  resource_name?: string;
  deployment?: string;
  /** AWS Bedrock */
  aws_region?: string;
  aws_access_key_id?: string;
  aws_secret_access_key?: string;
  aws_session_token?: string;
  /** How the integration authenticates upstream; unset means apiKey. */
  provider_auth_type?: 'apiKey' | 'oauthClientCredentials' | 'wif';
  /** OAuth client credentials (provider_auth_type oauthClientCredentials). */
  oauth_token_endpoint?: string;
  oauth_client_id?: string;
  oauth_client_secret?: string;
  oauth_scope?: string;
  /** Workload identity federation (provider_auth_type wif). */
  wif_token_endpoint?: string;
  wif_audience?: string;
  wif_scope?: string;
  /** How an Azure OpenAI integration authenticates, as the reference names it; unset means default (the key). */
  azure_auth_mode?: 'default' | 'entra' | 'managed';
  /** Entra client credentials (azure_auth_mode entra). */
  azure_entra_tenant_id?: string;
  azure_entra_client_id?: string;
  azure_entra_client_secret?: string;
  /** Another Entra authority (a national cloud) instead of https://login.microsoftonline.com. */
  azure_authority_host?: string;
}

export interface PricingMultiplier {
  default?: number | null;
  request_token?: number | null;
  response_token?: number | null;
  cache_read_input_token?: number | null;
  cache_write_input_token?: number | null;
  reasoning_token?: number | null;
}

/** Applied on top of the base model prices for cost tracking. */
export interface PricingAdjustments {
  multiplier?: PricingMultiplier;
}

export interface Integration {
  id: string;
  organisationId: string;
  /** Null when every workspace of the organisation may use it. */
  workspaceId: string | null;
  slug: string;
  name: string;
  description: string | null;
  /** The base AI provider; null for a plugin integration. */
  provider: string | null;
  /** A legacy plugin integration's provider; null for an AI provider integration. */
  pluginProviderId: string | null;
  encryptedKey: string | null;
  /** A plugin integration's credentials, each value SecretBox ciphertext; null for others. */
  credentials: Record<string, string> | null;
  configurations: IntegrationConfigurations;
  pricingAdjustments: PricingAdjustments | null;
  status: IntegrationStatus;
  createdAt: Date;
  updatedAt: Date;
}

export const IntegrationEntity = new EntitySchema<Integration>({
  name: 'Integration',
  tableName: 'integrations',
  columns: {
    id: { type: 'uuid', primary: true },
    organisationId: { name: 'organisation_id', type: 'uuid' },
    workspaceId: { name: 'workspace_id', type: 'uuid', nullable: true },
    slug: { type: 'text' },
    name: { type: 'text' },
    description: { type: 'text', nullable: true },
    provider: { type: 'text', nullable: true },
    pluginProviderId: { name: 'plugin_provider_id', type: 'text', nullable: true },
    encryptedKey: { name: 'encrypted_key', type: 'text', nullable: true },
    credentials: { name: 'encrypted_credentials', type: 'jsonb', nullable: true },
    configurations: { type: 'jsonb' },
    pricingAdjustments: { name: 'pricing_adjustments', type: 'jsonb', nullable: true },
    status: { type: 'text' },
    createdAt: { name: 'created_at', type: 'timestamptz', createDate: true },
    updatedAt: { name: 'updated_at', type: 'timestamptz', updateDate: true },
  },
});

/** The choices an organisation made. A setting it never chose is absent: its default applies. */
export interface OrganisationSettingValues {
  block_inline_config?: boolean;
  /** Fields of request logs that log exports may not hold (names from EXPORT_FIELDS). */
  export_settings?: { deniedFields: string[] };
}

export type OrganisationSettingName = keyof OrganisationSettingValues;

export interface OrganisationSettings {
  organisationId: string;
  settings: OrganisationSettingValues;
  updatedAt: Date;
  /** The API key that made the last change. */
  updatedBy: string;
}

export const OrganisationSettingsEntity = new EntitySchema<OrganisationSettings>({
  name: 'OrganisationSettings',
  tableName: 'organisation_settings',
  columns: {
    organisationId: { name: 'organisation_id', type: 'uuid', primary: true },
    settings: { type: 'jsonb' },
    updatedAt: { name: 'updated_at', type: 'timestamptz' },
    updatedBy: { name: 'updated_by', type: 'text' },
  },
});

export type TokenEndpointAuthMethod =
  'client_secret_basic' | 'client_secret_post' | 'private_key_jwt' | 'none';

/** A public JSON Web Key of the client (for private_key_jwt). */
export type PublicJwk = Record<string, unknown>;

/** One OIDC connection of an organisation, named by its client_id. */
export interface SsoConnection {
  id: string;
  organisationId: string;
  clientId: string;
  enabled: boolean;
  issuer: string;
  /** SecretBox ciphertext; null for methods that take no secret. */
  encryptedClientSecret: string | null;
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  /** The client's public keys, for private_key_jwt only. */
  jwks: { keys: PublicJwk[] } | null;
  scopes: string[];
  disableAutoProvisionUser: boolean;
  createdAt: Date;
  updatedAt: Date;
  /** The API key that made the last change. */
  updatedBy: string;
}

export const SsoConnectionEntity = new EntitySchema<SsoConnection>({
  name: 'SsoConnection',
  tableName: 'sso_connections',
  columns: {
    id: { type: 'uuid', primary: true },
    organisationId: { name: 'organisation_id', type: 'uuid' },
    clientId: { name: 'client_id', type: 'text' },
    enabled: { type: 'boolean' },
    issuer: { type: 'text' },
    encryptedClientSecret: { name: 'encrypted_client_secret', type: 'text', nullable: true },
    tokenEndpointAuthMethod: { name: 'token_endpoint_auth_method', type: 'text' },
    jwks: { type: 'jsonb', nullable: true },
    scopes: { type: 'jsonb' },
    disableAutoProvisionUser: { name: 'disable_auto_provision_user', type: 'boolean' },
    createdAt: { name: 'created_at', type: 'timestamptz', createDate: true },
    updatedAt: { name: 'updated_at', type: 'timestamptz', updateDate: true },
    updatedBy: { name: 'updated_by', type: 'text' },
  },
});

/** An email domain an organisation claims: its users sign in through the organisation's SSO. */
export interface OrganisationEmailDomain {
  id: string;
  organisationId: string;
  /** Lower-case ASCII (punycode for international names). */
  domain: string;
  allowSubdomains: boolean;
  createdAt: Date;
  createdBy: string;
}

export const OrganisationEmailDomainEntity = new EntitySchema<OrganisationEmailDomain>({
  name: 'OrganisationEmailDomain',
  tableName: 'organisation_email_domains',
  columns: {
    id: { type: 'uuid', primary: true },
    organisationId: { name: 'organisation_id', type: 'uuid' },
    domain: { type: 'text' },
    allowSubdomains: { name: 'allow_subdomains', type: 'boolean' },
    createdAt: { name: 'created_at', type: 'timestamptz', createDate: true },
    createdBy: { name: 'created_by', type: 'text' },
  },
});

/** An organisation's SCIM token: its hash to find it, its ciphertext to show it masked. */
export interface ScimCredential {
  organisationId: string;
  tokenHash: string;
  encryptedToken: string;
  createdAt: Date;
  /** The API key that issued it. */
  createdBy: string;
}

export const ScimCredentialEntity = new EntitySchema<ScimCredential>({
  name: 'ScimCredential',
  tableName: 'scim_credentials',
  columns: {
    organisationId: { name: 'organisation_id', type: 'uuid', primary: true },
    tokenHash: { name: 'token_hash', type: 'text' },
    encryptedToken: { name: 'encrypted_token', type: 'text' },
    createdAt: { name: 'created_at', type: 'timestamptz' },
    createdBy: { name: 'created_by', type: 'text' },
  },
});

/** A user as the organisation's identity provider sees them; `userId` is control-plane's user. */
export interface ScimUser {
  organisationId: string;
  userId: string;
  userName: string;
  email: string;
  externalId: string | null;
  givenName: string | null;
  familyName: string | null;
  displayName: string | null;
  active: boolean;
  createdAt: Date;
  updatedAt: Date;
}

export const ScimUserEntity = new EntitySchema<ScimUser>({
  name: 'ScimUser',
  tableName: 'scim_users',
  columns: {
    organisationId: { name: 'organisation_id', type: 'uuid', primary: true },
    userId: { name: 'user_id', type: 'uuid', primary: true },
    userName: { name: 'user_name', type: 'text' },
    email: { type: 'text' },
    externalId: { name: 'external_id', type: 'text', nullable: true },
    givenName: { name: 'given_name', type: 'text', nullable: true },
    familyName: { name: 'family_name', type: 'text', nullable: true },
    displayName: { name: 'display_name', type: 'text', nullable: true },
    active: { type: 'boolean' },
    createdAt: { name: 'created_at', type: 'timestamptz' },
    updatedAt: { name: 'updated_at', type: 'timestamptz' },
  },
});

export interface ScimGroup {
  id: string;
  organisationId: string;
  displayName: string;
  externalId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export const ScimGroupEntity = new EntitySchema<ScimGroup>({
  name: 'ScimGroup',
  tableName: 'scim_groups',
  columns: {
    id: { type: 'uuid', primary: true },
    organisationId: { name: 'organisation_id', type: 'uuid' },
    displayName: { name: 'display_name', type: 'text' },
    externalId: { name: 'external_id', type: 'text', nullable: true },
    createdAt: { name: 'created_at', type: 'timestamptz' },
    updatedAt: { name: 'updated_at', type: 'timestamptz' },
  },
});

export interface ScimGroupMember {
  groupId: string;
  userId: string;
  organisationId: string;
}

export const ScimGroupMemberEntity = new EntitySchema<ScimGroupMember>({
  name: 'ScimGroupMember',
  tableName: 'scim_group_members',
  columns: {
    groupId: { name: 'group_id', type: 'uuid', primary: true },
    userId: { name: 'user_id', type: 'uuid', primary: true },
    organisationId: { name: 'organisation_id', type: 'uuid' },
  },
});

export type ScimWorkspaceRole = 'admin' | 'manager' | 'member';

/** Members of the group are members of the workspace with this role. */
export interface ScimWorkspaceMapping {
  id: string;
  organisationId: string;
  groupId: string;
  workspaceId: string;
  role: ScimWorkspaceRole;
  createdAt: Date;
  createdBy: string;
}

export const ScimWorkspaceMappingEntity = new EntitySchema<ScimWorkspaceMapping>({
  name: 'ScimWorkspaceMapping',
  tableName: 'scim_workspace_mappings',
  columns: {
    id: { type: 'uuid', primary: true },
    organisationId: { name: 'organisation_id', type: 'uuid' },
    groupId: { name: 'group_id', type: 'uuid' },
    workspaceId: { name: 'workspace_id', type: 'uuid' },
    role: { type: 'text' },
    createdAt: { name: 'created_at', type: 'timestamptz' },
    createdBy: { name: 'created_by', type: 'text' },
  },
});

export type DeploymentType = 'production' | 'non_production';
export type DeploymentStatus = 'active' | 'archived';

/** How the deployment's gateways authenticate callers and which workspaces they serve. */
export interface DeploymentAuthSettings {
  gateway_base_url: string | null;
  mcp_gateway_base_url: string | null;
  private_link_endpoint: string | null;
  use_private_link_proxy: boolean;
  is_dataservice_hosted: boolean;
  is_playground_proxy_allowed: boolean;
  disable_vendor_gateway: boolean;
  allow_all_workspaces: boolean;
  workspaces_allowed: string[];
  jwt_subs_allowed: string[];
  /** JWT `sub` to the workspace it acts in. */
  jwt_sub_workspace_mapping: Record<string, string>;
}

/** A gateway deployment of an organisation: where its gateways run and how they authenticate. */
export interface Deployment {
  id: string;
  organisationId: string;
  name: string;
  slug: string;
  type: DeploymentType;
  status: DeploymentStatus;
  isDefault: boolean;
  tags: Record<string, string>;
  authSettings: DeploymentAuthSettings;
  deploymentConfig: Record<string, unknown>;
  workspaces: Array<{ id: string; slug: string }>;
  credentialsUsername: string | null;
  /** SecretBox ciphertext; null when no credentials are set. */
  encryptedCredentialsPassword: string | null;
  clientAuth: string | null;
  /** Grows by one with each change, so that gateways know to apply the settings again. */
  settingsRevision: number;
  /** When a gateway instance last picked up changed settings; null when none ever did. */
  lastResyncedAt: Date | null;
  /** The user, or else the API key, that created it. */
  createdBy: string;
  createdAt: Date;
  updatedAt: Date;
}

export const DeploymentEntity = new EntitySchema<Deployment>({
  name: 'Deployment',
  tableName: 'deployments',
  columns: {
    id: { type: 'uuid', primary: true },
    organisationId: { name: 'organisation_id', type: 'uuid' },
    name: { type: 'text' },
    slug: { type: 'text' },
    type: { type: 'text' },
    status: { type: 'text' },
    isDefault: { name: 'is_default', type: 'boolean' },
    tags: { type: 'jsonb' },
    authSettings: { name: 'auth_settings', type: 'jsonb' },
    deploymentConfig: { name: 'deployment_config', type: 'jsonb' },
    workspaces: { type: 'jsonb' },
    credentialsUsername: { name: 'credentials_username', type: 'text', nullable: true },
    encryptedCredentialsPassword: { name: 'encrypted_credentials_password', type: 'text', nullable: true },
    clientAuth: { name: 'client_auth', type: 'text', nullable: true },
    settingsRevision: { name: 'settings_revision', type: 'integer' },
    lastResyncedAt: { name: 'last_resynced_at', type: 'timestamptz', nullable: true },
    createdBy: { name: 'created_by', type: 'text' },
    createdAt: { name: 'created_at', type: 'timestamptz' },
    updatedAt: { name: 'updated_at', type: 'timestamptz' },
  },
});

/** What a gateway version supports, from its semver. */
export interface GatewayFeatures {
  block_inline_config: boolean;
  mcp_tool_rate_limits: boolean;
}

/** One gateway process of a deployment, as its heartbeats report it. */
export interface DeploymentInstance {
  deploymentId: string;
  instanceId: string;
  version: string;
  features: GatewayFeatures;
  /** The deployment's settings revision it was last answered. */
  settingsRevision: number;
  firstSeenAt: Date;
  lastHeartbeatAt: Date;
}

export const DeploymentInstanceEntity = new EntitySchema<DeploymentInstance>({
  name: 'DeploymentInstance',
  tableName: 'deployment_instances',
  columns: {
    deploymentId: { name: 'deployment_id', type: 'uuid', primary: true },
    instanceId: { name: 'instance_id', type: 'text', primary: true },
    version: { type: 'text' },
    features: { type: 'jsonb' },
    settingsRevision: { name: 'settings_revision', type: 'integer' },
    firstSeenAt: { name: 'first_seen_at', type: 'timestamptz' },
    lastHeartbeatAt: { name: 'last_heartbeat_at', type: 'timestamptz' },
  },
});

/**
 * One workspace's own access to an organisation-level integration (PUT
 * /v1/integrations/{slug}/workspaces). A workspace with no row follows the integration's
 * `global_workspace_access` column (see IntegrationService.setWorkspaceAccess).
 */
export interface IntegrationWorkspace {
  integrationId: string;
  workspaceId: string;
  enabled: boolean;
  updatedAt: Date;
}

export const IntegrationWorkspaceEntity = new EntitySchema<IntegrationWorkspace>({
  name: 'IntegrationWorkspace',
  tableName: 'integration_workspaces',
  columns: {
    integrationId: { name: 'integration_id', type: 'uuid', primary: true },
    workspaceId: { name: 'workspace_id', type: 'uuid', primary: true },
    enabled: { type: 'boolean' },
    updatedAt: { name: 'updated_at', type: 'timestamptz' },
  },
});

/** `internal`: Switchyard keeps the secret itself; the others are external managers. */
export type SecretManagerType = 'internal' | ExternalManagerType;
export type ExternalManagerType = 'aws_sm' | 'azure_kv' | 'hashicorp_vault';

/**
 * Where an organisation keeps a secret (Switchyard itself, AWS Secrets Manager, HashiCorp Vault, Azure Key Vault)
 * and how to fetch it. Integrations map their key or settings to it (`secret_mappings`).
 */
export interface SecretReference {
  id: string;
  organisationId: string;
  name: string;
  slug: string;
  description: string | null;
  managerType: SecretManagerType;
  /** How to authenticate to the manager; its secret fields are SecretBox ciphertext. Empty for `internal`. */
  authConfig: Record<string, string>;
  /** Where the manager keeps the secret; null for `internal`. */
  secretPath: string | null;
  /** `internal` only: SecretBox ciphertext of the secret's JSON (a string or an object of scalars). */
  encryptedValue: string | null;
  /** The field of a JSON secret to take; null for the whole value. */
  secretKey: string | null;
  allowAllWorkspaces: boolean;
  /** Workspace ids; empty when every workspace may use it. */
  allowedWorkspaces: string[];
  tags: Record<string, string> | null;
  /** The user, or else the API key, that created it. */
  createdBy: string;
  createdAt: Date;
  updatedAt: Date;
}

export const SecretReferenceEntity = new EntitySchema<SecretReference>({
  name: 'SecretReference',
  tableName: 'secret_references',
  columns: {
    id: { type: 'uuid', primary: true },
    organisationId: { name: 'organisation_id', type: 'uuid' },
    name: { type: 'text' },
    slug: { type: 'text' },
    description: { type: 'text', nullable: true },
    managerType: { name: 'manager_type', type: 'text' },
    authConfig: { name: 'auth_config', type: 'jsonb' },
    secretPath: { name: 'secret_path', type: 'text', nullable: true },
    encryptedValue: { name: 'encrypted_value', type: 'text', nullable: true },
    secretKey: { name: 'secret_key', type: 'text', nullable: true },
    allowAllWorkspaces: { name: 'allow_all_workspaces', type: 'boolean' },
    allowedWorkspaces: { name: 'allowed_workspaces', type: 'jsonb' },
    tags: { type: 'jsonb', nullable: true },
    createdBy: { name: 'created_by', type: 'text' },
    createdAt: { name: 'created_at', type: 'timestamptz' },
    updatedAt: { name: 'updated_at', type: 'timestamptz' },
  },
});

export const entities = [
  IntegrationEntity,
  IntegrationWorkspaceEntity,
  OrganisationSettingsEntity,
  SsoConnectionEntity,
  OrganisationEmailDomainEntity,
  ScimCredentialEntity,
  ScimUserEntity,
  ScimGroupEntity,
  ScimGroupMemberEntity,
  ScimWorkspaceMappingEntity,
  DeploymentEntity,
  DeploymentInstanceEntity,
  SecretReferenceEntity,
];
