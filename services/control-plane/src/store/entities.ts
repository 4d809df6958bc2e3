import { EntitySchema } from 'typeorm';
import type { ApiKeyKind } from '@switchyard/access';

export const SCHEMA = 'control_plane';

export interface Organisation {
  id: string;
  name: string;
  slug: string;
  createdAt: Date;
}

export interface Workspace {
  id: string;
  organisationId: string;
  name: string;
  slug: string;
  description: string | null;
  /** The saved config of this workspace that its user API keys default to (defaults.user_api_key_config). */
  userApiKeyConfigId: string | null;
  /** Overrides the organisation's user_api_key_auto_create; null follows it. */
  userApiKeyAutoCreate: boolean | null;
  /** The saved config of this workspace every key without a default of its own uses (defaults.config). */
  defaultConfigId: string | null;
  /** The workspace's own security settings, by section; only sections the organisation lets workspaces override. */
  securitySettings: Record<string, object | string | number | boolean>;
  createdAt: Date;
  updatedAt: Date;
  /** When the workspace was deleted; an archived workspace is found by nothing. */
  archivedAt: Date | null;
}

export type ApiKeyStatus = 'active' | 'revoked';

export interface ApiKey {
  id: string;
  organisationId: string;
  workspaceId: string | null;
  kind: ApiKeyKind;
  name: string;
  description: string | null;
  keyHash: string;
  /** The first characters of the key, kept so a masked form can be shown. */
  keyHint: string;
  scopes: string[];
  status: ApiKeyStatus;
  userId: string | null;
  createdAt: Date;
  updatedAt: Date;
  expiresAt: Date | null;
  /** The rotation policy's period; null without a policy or with a one-off next_rotation_at. */
  rotationPeriodDays: number | null;
  /** When the key is next due for rotation; null without a policy. */
  nextRotationAt: Date | null;
  /** The saved config of the key's workspace its requests use when they name none (defaults.config_id). */
  defaultConfigId: string | null;
  /** Metadata its requests carry under their own (defaults.metadata); null for none. */
  defaultMetadata: Record<string, string> | null;
  /** False: a request may not bring its own config (defaults.allow_config_override). */
  allowConfigOverride: boolean;
}

const timestamps = {
  createdAt: { name: 'created_at', type: 'timestamptz', createDate: true },
  updatedAt: { name: 'updated_at', type: 'timestamptz', updateDate: true },
} as const;

export const OrganisationEntity = new EntitySchema<Organisation>({
  name: 'Organisation',
  tableName: 'organisations',
  columns: {
    id: { type: 'uuid', primary: true },
    name: { type: 'text' },
    slug: { type: 'text', unique: true },
    createdAt: timestamps.createdAt,
  },
});

export const WorkspaceEntity = new EntitySchema<Workspace>({
  name: 'Workspace',
  tableName: 'workspaces',
  columns: {
    id: { type: 'uuid', primary: true },
    organisationId: { name: 'organisation_id', type: 'uuid' },
    name: { type: 'text' },
    slug: { type: 'text' },
    description: { type: 'text', nullable: true },
    userApiKeyConfigId: { name: 'user_api_key_config_id', type: 'uuid', nullable: true },
    userApiKeyAutoCreate: { name: 'user_api_key_auto_create', type: 'boolean', nullable: true },
    defaultConfigId: { name: 'default_config_id', type: 'uuid', nullable: true },
    securitySettings: { name: 'security_settings', type: 'jsonb' },
    ...timestamps,
    archivedAt: { name: 'archived_at', type: 'timestamptz', nullable: true },
  },
});

export const ApiKeyEntity = new EntitySchema<ApiKey>({
  name: 'ApiKey',
  tableName: 'api_keys',
  columns: {
    id: { type: 'uuid', primary: true },
    organisationId: { name: 'organisation_id', type: 'uuid' },
    workspaceId: { name: 'workspace_id', type: 'uuid', nullable: true },
    kind: { type: 'text' },
    name: { type: 'text' },
    description: { type: 'text', nullable: true },
    keyHash: { name: 'key_hash', type: 'text', unique: true },
    keyHint: { name: 'key_hint', type: 'text' },
    scopes: { type: 'jsonb' },
    status: { type: 'text' },
    userId: { name: 'user_id', type: 'uuid', nullable: true },
    ...timestamps,
    expiresAt: { name: 'expires_at', type: 'timestamptz', nullable: true },
    rotationPeriodDays: { name: 'rotation_period_days', type: 'int', nullable: true },
    nextRotationAt: { name: 'next_rotation_at', type: 'timestamptz', nullable: true },
    defaultConfigId: { name: 'default_config_id', type: 'uuid', nullable: true },
    defaultMetadata: { name: 'default_metadata', type: 'jsonb', nullable: true },
    allowConfigOverride: { name: 'allow_config_override', type: 'boolean', default: true },
  },
});

export const entities = [OrganisationEntity, WorkspaceEntity, ApiKeyEntity];
