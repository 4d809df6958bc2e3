import { EntitySchema } from 'typeorm';
import type { GuardrailActions, GuardrailCheck } from '@switchyard/guardrails';
import type { StoredSecretMapping } from '../domain/secret-mapping.schemas.ts';

export type GuardrailStatus = 'active' | 'archived';

/**
 * A guardrail definition: the checks to run and what to do when one fails, of one workspace
 * or (workspace null) of the whole organisation. Configs name it by slug.
 */
export interface Guardrail {
  id: string;
  organisationId: string;
  /** Null for an organisation-level guardrail. */
  workspaceId: string | null;
  name: string;
  /** Unique in the organisation, also once archived, so an old reference never finds another guardrail. */
  slug: string;
  checks: GuardrailCheck[];
  actions: GuardrailActions;
  /** Headers of its webhook checks whose values come from secret references (not versioned). */
  secretMappings: StoredSecretMapping[];
  status: GuardrailStatus;
  /** The user, else the API key, that created the guardrail. */
  ownerId: string;
  updatedBy: string;
  createdAt: Date;
  updatedAt: Date;
  currentVersionId: string;
}

/** The checks and actions as one create or update left them. */
export interface GuardrailVersion {
  id: string;
  guardrailId: string;
  /** 1 for what the guardrail was created with, then one more per change of checks or actions. */
  version: number;
  checks: GuardrailCheck[];
  actions: GuardrailActions;
  createdAt: Date;
  createdBy: string;
}

export const GuardrailEntity = new EntitySchema<Guardrail>({
  name: 'Guardrail',
  tableName: 'guardrails',
  columns: {
    id: { type: 'uuid', primary: true },
    organisationId: { name: 'organisation_id', type: 'uuid' },
    workspaceId: { name: 'workspace_id', type: 'uuid', nullable: true },
    name: { type: 'text' },
    slug: { type: 'text' },
    checks: { type: 'jsonb' },
    actions: { type: 'jsonb' },
    secretMappings: { name: 'secret_mappings', type: 'jsonb' },
    status: { type: 'text' },
    ownerId: { name: 'owner_id', type: 'uuid' },
    updatedBy: { name: 'updated_by', type: 'uuid' },
    createdAt: { name: 'created_at', type: 'timestamptz', createDate: true },
    updatedAt: { name: 'last_updated_at', type: 'timestamptz', updateDate: true },
    currentVersionId: { name: 'current_version_id', type: 'uuid' },
  },
});

export const GuardrailVersionEntity = new EntitySchema<GuardrailVersion>({
  name: 'GuardrailVersion',
  tableName: 'guardrail_versions',
  columns: {
    id: { type: 'uuid', primary: true },
    guardrailId: { name: 'guardrail_id', type: 'uuid' },
    version: { type: 'int' },
    checks: { type: 'jsonb' },
    actions: { type: 'jsonb' },
    createdAt: { name: 'created_at', type: 'timestamptz', createDate: true },
    createdBy: { name: 'created_by', type: 'uuid' },
  },
});

export const guardrailEntities = [GuardrailEntity, GuardrailVersionEntity];
