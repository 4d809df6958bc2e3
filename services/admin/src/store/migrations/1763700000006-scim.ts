import type { MigrationInterface, QueryRunner } from 'typeorm';

/** SCIM provisioning: an organisation's token, its provisioned users and groups, and group-to-workspace mappings. */
export class Scim1763700000006 implements MigrationInterface {
  name = 'Scim1763700000006';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE admin.scim_credentials (
        organisation_id uuid PRIMARY KEY,
        token_hash text NOT NULL UNIQUE,
        encrypted_token text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        created_by text NOT NULL
      )`);
    await q.query(`
      CREATE TABLE admin.scim_users (
        organisation_id uuid NOT NULL,
        user_id uuid NOT NULL,
        user_name text NOT NULL,
        email text NOT NULL,
        external_id text,
        given_name text,
        family_name text,
        display_name text,
        active boolean NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (organisation_id, user_id)
      )`);
    await q.query(
      `CREATE UNIQUE INDEX scim_users_user_name ON admin.scim_users (organisation_id, lower(user_name))`,
    );
    await q.query(`
      CREATE TABLE admin.scim_groups (
        id uuid PRIMARY KEY,
        organisation_id uuid NOT NULL,
        display_name text NOT NULL,
        external_id text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(
      `CREATE UNIQUE INDEX scim_groups_display_name ON admin.scim_groups (organisation_id, lower(display_name))`,
    );
    await q.query(`
      CREATE TABLE admin.scim_group_members (
        group_id uuid NOT NULL REFERENCES admin.scim_groups (id) ON DELETE CASCADE,
        user_id uuid NOT NULL,
        organisation_id uuid NOT NULL,
        PRIMARY KEY (group_id, user_id),
        FOREIGN KEY (organisation_id, user_id)
          REFERENCES admin.scim_users (organisation_id, user_id) ON DELETE CASCADE
      )`);
    await q.query(
      `CREATE INDEX scim_group_members_user ON admin.scim_group_members (organisation_id, user_id)`,
    );
    await q.query(`
      CREATE TABLE admin.scim_workspace_mappings (
        id uuid PRIMARY KEY,
        organisation_id uuid NOT NULL,
        group_id uuid NOT NULL REFERENCES admin.scim_groups (id) ON DELETE CASCADE,
        workspace_id uuid NOT NULL,
        role text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        created_by text NOT NULL,
        UNIQUE (group_id, workspace_id)
      )`);
    await q.query(
      `CREATE INDEX scim_workspace_mappings_organisation ON admin.scim_workspace_mappings (organisation_id, created_at)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE admin.scim_workspace_mappings`);
    await q.query(`DROP TABLE admin.scim_group_members`);
    await q.query(`DROP TABLE admin.scim_groups`);
    await q.query(`DROP TABLE admin.scim_users`);
    await q.query(`DROP TABLE admin.scim_credentials`);
  }
}
