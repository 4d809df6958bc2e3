import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Every scope an organisation admin key could hold when scopes began to be enforced. */
const ORGANISATION_ADMIN = [
  'workspaces.create',
  'workspaces.read',
  'workspaces.list',
  'workspaces.update',
  'workspaces.delete',
  'api_keys.create',
  'api_keys.read',
  'api_keys.list',
  'api_keys.update',
  'api_keys.delete',
  'configs.create',
  'configs.read',
  'configs.list',
  'configs.update',
  'configs.delete',
  'integrations.create',
  'integrations.read',
  'integrations.list',
  'integrations.update',
  'integrations.delete',
  'organisation_users.create',
  'organisation_users.read',
  'organisation_users.list',
  'organisation_users.update',
  'organisation_users.delete',
  'workspace_users.create',
  'workspace_users.read',
  'workspace_users.list',
  'workspace_users.update',
  'workspace_users.delete',
  'logs.view',
  'logs.list',
  'logs.export',
  'organisation_settings.read',
  'organisation_settings.update',
  'organisation_guardrails.create',
  'organisation_guardrails.read',
  'organisation_guardrails.list',
  'organisation_guardrails.update',
  'organisation_guardrails.delete',
  'organisation_exclusions.list',
  'organisation_exclusions.update',
];

/** Every scope a workspace key could hold then. */
const WORKSPACE = [
  'completions.write',
  'models.read',
  'models.write',
  'files.read',
  'files.write',
  'batches.read',
  'batches.write',
  'fine_tuning.read',
  'fine_tuning.write',
  'assistants.read',
  'assistants.write',
  'vector_stores.read',
  'vector_stores.write',
  'guardrails.invoke',
  'agents.invoke',
  'workspaces.read',
  'workspaces.list',
  'api_keys.read',
  'api_keys.list',
  'configs.create',
  'configs.read',
  'configs.list',
  'configs.update',
  'configs.delete',
  'integrations.read',
  'integrations.list',
  'logs.view',
  'logs.list',
  'logs.export',
];

/**
 * Scopes are enforced from here on. Keys made before held none ("[]" meant "unchecked"), so
 * each gets what its kind could do, and keeps working as it did.
 */
export class ApiKeyScopes1763700000011 implements MigrationInterface {
  name = 'ApiKeyScopes1763700000011';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `UPDATE control_plane.api_keys SET scopes = $1::jsonb WHERE kind = 'organisation_admin' AND scopes = '[]'::jsonb`,
      [JSON.stringify(ORGANISATION_ADMIN)],
    );
    await q.query(
      `UPDATE control_plane.api_keys SET scopes = $1::jsonb WHERE kind <> 'organisation_admin' AND scopes = '[]'::jsonb`,
      [JSON.stringify(WORKSPACE)],
    );
  }

  async down(): Promise<void> {
    // Scopes given to old keys cannot be told apart from scopes given on purpose: nothing to undo.
  }
}
