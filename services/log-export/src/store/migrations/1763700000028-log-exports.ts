import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Log exports: what each asks for, where it stands, and who runs it. A running export is held
 * by one log-export process at a time through its lease (`runner`, `lease_until`); a process
 * that dies leaves a lease that runs out, and another takes the export over.
 */
export class LogExports1763700000028 implements MigrationInterface {
  name = 'LogExports1763700000028';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE log_export.log_exports (
        id uuid PRIMARY KEY,
        organisation_id uuid NOT NULL,
        workspace_id uuid,
        created_by text NOT NULL,
        user_id uuid,
        description text NOT NULL DEFAULT '',
        filters jsonb NOT NULL CHECK (jsonb_typeof(filters) = 'object'),
        requested_data text[] NOT NULL,
        status text NOT NULL
          CHECK (status IN ('draft', 'in_progress', 'success', 'failed', 'stopped')),
        total bigint NOT NULL DEFAULT 0,
        exported bigint NOT NULL DEFAULT 0,
        bytes bigint,
        file_key text,
        error text,
        run int NOT NULL DEFAULT 0,
        runner text,
        lease_until timestamptz,
        created_at timestamptz NOT NULL,
        last_updated_at timestamptz NOT NULL,
        started_at timestamptz,
        finished_at timestamptz,
        archived_at timestamptz
      )`);
    await q.query(
      `CREATE INDEX log_exports_scope ON log_export.log_exports (organisation_id, created_at DESC)
        WHERE archived_at IS NULL`,
    );
    await q.query(
      `CREATE INDEX log_exports_running ON log_export.log_exports (lease_until) WHERE status = 'in_progress'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE log_export.log_exports`);
  }
}
