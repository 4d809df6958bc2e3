import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Feedback on requests as control-plane publishes it (FeedbackEvent), named by trace id: one
 * row per feedback, at the newest version seen. workspace_id is null for feedback of the
 * organisation.
 */
export class Feedback1763700000026 implements MigrationInterface {
  name = 'Feedback1763700000026';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE log_export.feedback (
        id uuid PRIMARY KEY,
        organisation_id uuid NOT NULL,
        workspace_id uuid,
        trace_id text NOT NULL,
        value int NOT NULL,
        weight double precision NOT NULL,
        metadata jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object'),
        version int NOT NULL,
        created_by text NOT NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX feedback_trace ON log_export.feedback (organisation_id, trace_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE log_export.feedback`);
  }
}
