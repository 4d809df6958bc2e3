import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Feedback on requests, named by their trace id: of one workspace or (workspace_id null) of
 * the organisation. `version` counts the writes of each, so that log-export keeps the newest.
 *
 * The `feedback.write` scope joins the workspace scopes. A key gets it when it may call
 * models or read request logs (what the feedback is on): an organisation admin key that can
 * read the organisation's settings (as with the audit, SSO, SCIM and policy scopes), any
 * other key holding `completions.write` or `logs.view`.
 */
export class Feedback1763700000026 implements MigrationInterface {
  name = 'Feedback1763700000026';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE control_plane.feedback (
        id uuid PRIMARY KEY,
        organisation_id uuid NOT NULL REFERENCES control_plane.organisations(id),
        workspace_id uuid REFERENCES control_plane.workspaces(id),
        trace_id text NOT NULL CHECK (char_length(trace_id) BETWEEN 1 AND 1024),
        value int NOT NULL CHECK (value BETWEEN -10 AND 10),
        weight double precision NOT NULL CHECK (weight >= 0 AND weight <= 1),
        metadata jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object'),
        version int NOT NULL DEFAULT 1 CHECK (version >= 1),
        created_by uuid NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX feedback_trace_idx ON control_plane.feedback (organisation_id, trace_id)`);
    await q.query(
      `UPDATE control_plane.api_keys
          SET scopes = scopes || '["feedback.write"]'::jsonb
        WHERE NOT scopes @> '["feedback.write"]'::jsonb
          AND (
            (kind = 'organisation_admin' AND scopes @> '["organisation_settings.read"]'::jsonb)
            OR (kind <> 'organisation_admin' AND (scopes @> '["completions.write"]'::jsonb OR scopes @> '["logs.view"]'::jsonb))
          )`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`UPDATE control_plane.api_keys SET scopes = scopes - 'feedback.write'`);
    await q.query(`DROP TABLE control_plane.feedback`);
  }
}
