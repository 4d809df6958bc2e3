import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An organisation's gateway deployments and the gateway instances that report for them. The
 * credentials' password is SecretBox ciphertext. At most one deployment of an organisation is
 * its default, and a slug names one live deployment of an organisation (archived ones free it).
 */
export class Deployments1763700000010 implements MigrationInterface {
  name = 'Deployments1763700000010';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE admin.deployments (
        id uuid PRIMARY KEY,
        organisation_id uuid NOT NULL,
        name text NOT NULL,
        slug text NOT NULL,
        type text NOT NULL CHECK (type IN ('production', 'non_production')),
        status text NOT NULL CHECK (status IN ('active', 'archived')),
        is_default boolean NOT NULL DEFAULT false,
        tags jsonb NOT NULL DEFAULT '{}',
        auth_settings jsonb NOT NULL,
        deployment_config jsonb NOT NULL DEFAULT '{}',
        workspaces jsonb NOT NULL DEFAULT '[]',
        credentials_username text,
        encrypted_credentials_password text,
        client_auth text,
        settings_revision integer NOT NULL DEFAULT 1,
        last_resynced_at timestamptz,
        created_by text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE UNIQUE INDEX deployments_live_slug
        ON admin.deployments (organisation_id, slug) WHERE status = 'active'`);
    await q.query(`
      CREATE UNIQUE INDEX deployments_one_default
        ON admin.deployments (organisation_id) WHERE is_default`);
    await q.query(
      `CREATE INDEX deployments_by_organisation ON admin.deployments (organisation_id, created_at, id)`,
    );
    await q.query(`
      CREATE TABLE admin.deployment_instances (
        deployment_id uuid NOT NULL REFERENCES admin.deployments (id) ON DELETE CASCADE,
        instance_id text NOT NULL,
        version text NOT NULL,
        features jsonb NOT NULL,
        settings_revision integer NOT NULL,
        first_seen_at timestamptz NOT NULL,
        last_heartbeat_at timestamptz NOT NULL,
        PRIMARY KEY (deployment_id, instance_id)
      )`);
    await q.query(`
      CREATE INDEX deployment_instances_newest
        ON admin.deployment_instances (deployment_id, last_heartbeat_at DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE admin.deployment_instances`);
    await q.query(`DROP TABLE admin.deployments`);
  }
}
