import { EntitySchema } from 'typeorm';
import type { RoutingConfig } from '@switchyard/rules';

export type SavedConfigStatus = 'active' | 'archived';

/** A routing config saved in a workspace; callers name it by slug or id. */
export interface SavedConfig {
  id: string;
  organisationId: string;
  workspaceId: string;
  name: string;
  /** Unique in the organisation, also once archived, so an old reference never finds another config. */
  slug: string;
  config: RoutingConfig;
  status: SavedConfigStatus;
  /** 0 or 1, as the API shows it; at most one default per workspace. */
  isDefault: number;
  /** The user, else the API key, that created the config. */
  ownerId: string;
  updatedBy: string;
  createdAt: Date;
  updatedAt: Date;
  currentVersionId: string;
}

/** The config document as one create or update left it. */
export interface ConfigVersion {
  id: string;
  configId: string;
  /** 1 for the document the config was created with, then one more per update. */
  version: number;
  config: RoutingConfig;
  createdAt: Date;
  createdBy: string;
}

export const SavedConfigEntity = new EntitySchema<SavedConfig>({
  name: 'SavedConfig',
  tableName: 'configs',
  columns: {
    id: { type: 'uuid', primary: true },
    organisationId: { name: 'organisation_id', type: 'uuid' },
    workspaceId: { name: 'workspace_id', type: 'uuid' },
    name: { type: 'text' },
    slug: { type: 'text' },
    config: { type: 'jsonb' },
    status: { type: 'text' },
    isDefault: { name: 'is_default', type: 'int' },
    ownerId: { name: 'owner_id', type: 'uuid' },
    updatedBy: { name: 'updated_by', type: 'uuid' },
    createdAt: { name: 'created_at', type: 'timestamptz', createDate: true },
    updatedAt: { name: 'last_updated_at', type: 'timestamptz', updateDate: true },
    currentVersionId: { name: 'current_version_id', type: 'uuid' },
  },
});

export const ConfigVersionEntity = new EntitySchema<ConfigVersion>({
  name: 'ConfigVersion',
  tableName: 'config_versions',
  columns: {
    id: { type: 'uuid', primary: true },
    configId: { name: 'config_id', type: 'uuid' },
    version: { type: 'int' },
    config: { type: 'jsonb' },
    createdAt: { name: 'created_at', type: 'timestamptz', createDate: true },
    createdBy: { name: 'created_by', type: 'uuid' },
  },
});

export const configEntities = [SavedConfigEntity, ConfigVersionEntity];
