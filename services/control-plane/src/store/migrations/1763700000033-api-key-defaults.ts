import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Defaults for requests that name no provider: an API key's own (config, metadata, whether a
 * request may bring its own config) and a workspace's config for every key without one.
 */
export class ApiKeyDefaults1763700000033 implements MigrationInterface {
  name = 'ApiKeyDefaults1763700000033';

  async up(q: QueryRunner): Promise<void> {
    // Stored by id, shown by slug, as workspaces.user_api_key_config_id; a named config cannot be archived.
    await q.query(`
      ALTER TABLE control_plane.api_keys
        ADD COLUMN default_config_id uuid REFERENCES control_plane.configs(id),
        ADD COLUMN default_metadata jsonb,
        ADD COLUMN allow_config_override boolean NOT NULL DEFAULT true`);
    await q.query(`
      CREATE INDEX api_keys_default_config_idx ON control_plane.api_keys (default_config_id)
        WHERE default_config_id IS NOT NULL`);
    await q.query(`
      ALTER TABLE control_plane.workspaces
        ADD COLUMN default_config_id uuid REFERENCES control_plane.configs(id)`);
    await q.query(`
      CREATE INDEX workspaces_default_config_idx ON control_plane.workspaces (default_config_id)
        WHERE default_config_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE control_plane.workspaces DROP COLUMN default_config_id`);
    await q.query(`
      ALTER TABLE control_plane.api_keys
        DROP COLUMN default_config_id, DROP COLUMN default_metadata, DROP COLUMN allow_config_override`);
  }
}
