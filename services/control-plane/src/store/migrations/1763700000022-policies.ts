import type { MigrationInterface, QueryRunner } from 'typeorm';

const COMMON = `
  id uuid PRIMARY KEY,
  organisation_id uuid NOT NULL REFERENCES control_plane.organisations(id),
  workspace_id uuid REFERENCES control_plane.workspaces(id),
  name text CHECK (char_length(name) <= 255),
  description text CHECK (char_length(description) <= 500),
  conditions jsonb NOT NULL CHECK (jsonb_typeof(conditions) = 'array' AND jsonb_array_length(conditions) >= 1),
  group_by jsonb NOT NULL CHECK (jsonb_typeof(group_by) = 'array' AND jsonb_array_length(group_by) >= 1),
  target text NOT NULL CHECK (target IN ('llm', 'mcp_tools')),
  status text NOT NULL CHECK (status IN ('active', 'archived')),
  created_by uuid NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_updated_at timestamptz NOT NULL DEFAULT now()`;

/**
 * Rate-limit and usage-limit policies of an organisation, each of one workspace or (workspace_id
 * null) organisation-wide. The policy service reads an organisation's active ones at a time.
 */
export class Policies1763700000022 implements MigrationInterface {
  name = 'Policies1763700000022';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE control_plane.rate_limit_policies (${COMMON},
        type text NOT NULL CHECK (type IN ('requests', 'tokens')),
        unit text NOT NULL CHECK (unit IN ('rpm', 'rph', 'rpd')),
        value bigint NOT NULL CHECK (value > 0)
      )`);
    await q.query(`
      CREATE TABLE control_plane.usage_limit_policies (${COMMON},
        type text NOT NULL CHECK (type IN ('cost', 'tokens', 'requests')),
        credit_limit double precision NOT NULL CHECK (credit_limit >= 0),
        alert_threshold double precision CHECK (alert_threshold >= 0 AND alert_threshold < credit_limit),
        periodic_reset text CHECK (periodic_reset IN ('monthly', 'weekly')),
        periodic_reset_days int CHECK (periodic_reset_days BETWEEN 1 AND 365),
        next_usage_reset_at timestamptz NOT NULL,
        last_reset_at timestamptz,
        CHECK (periodic_reset IS NULL OR periodic_reset_days IS NULL)
      )`);
    for (const table of ['rate_limit_policies', 'usage_limit_policies']) {
      await q.query(
        `CREATE INDEX ${table}_organisation_idx ON control_plane.${table} (organisation_id, status, created_at)`,
      );
    }
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE control_plane.usage_limit_policies`);
    await q.query(`DROP TABLE control_plane.rate_limit_policies`);
  }
}
