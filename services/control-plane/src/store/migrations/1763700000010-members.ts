import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Members1763700000010 implements MigrationInterface {
  name = 'Members1763700000010';

  async up(q: QueryRunner): Promise<void> {
    // A user is a person, shared by the organisations that add them; an email names one user whatever its case.
    await q.query(`
      CREATE TABLE control_plane.users (
        id uuid PRIMARY KEY,
        email text NOT NULL,
        first_name text,
        last_name text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX users_email_idx ON control_plane.users (lower(email))`);
    await q.query(`
      CREATE TABLE control_plane.organisation_members (
        organisation_id uuid NOT NULL REFERENCES control_plane.organisations(id),
        user_id uuid NOT NULL REFERENCES control_plane.users(id),
        role text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (organisation_id, user_id)
      )`);
    // Only an organisation member joins its workspaces, and leaving the organisation leaves them all.
    await q.query(`
      CREATE TABLE control_plane.workspace_members (
        workspace_id uuid NOT NULL REFERENCES control_plane.workspaces(id),
        organisation_id uuid NOT NULL,
        user_id uuid NOT NULL,
        role text NOT NULL CHECK (role IN ('admin', 'manager', 'member')),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (workspace_id, user_id),
        FOREIGN KEY (organisation_id, user_id)
          REFERENCES control_plane.organisation_members(organisation_id, user_id) ON DELETE CASCADE
      )`);
    await q.query(
      `CREATE INDEX workspace_members_user_idx ON control_plane.workspace_members (organisation_id, user_id)`,
    );
    await q.query(
      `CREATE INDEX api_keys_user_idx ON control_plane.api_keys (user_id) WHERE user_id IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX control_plane.api_keys_user_idx`);
    await q.query(`DROP TABLE control_plane.workspace_members`);
    await q.query(`DROP TABLE control_plane.organisation_members`);
    await q.query(`DROP TABLE control_plane.users`);
  }
}
