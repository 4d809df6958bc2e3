/**
 * SQL throughout: each write is one conditional upsert, so that concurrent writes of the
 * same organisation neither fail on the first row nor lose each other's workspaces.
 */
import type { EntityManager } from 'typeorm';

export type GuardrailPhase = 'input' | 'output';

/** An organisation's default guardrails (ids, in the order they run) and their exempted workspaces. */
export interface GuardrailDefaults {
  guardrailIds: Record<GuardrailPhase, string[]>;
  excludedWorkspaceIds: Record<GuardrailPhase, string[]>;
}

interface Row {
  input_guardrail_ids: string[];
  output_guardrail_ids: string[];
  input_excluded_workspace_ids: string[];
  output_excluded_workspace_ids: string[];
}

/** Column names by phase: fixed strings, never the caller's. */
const EXCLUDED_COLUMN = {
  input: 'input_excluded_workspace_ids',
  output: 'output_excluded_workspace_ids',
} as const satisfies Record<GuardrailPhase, keyof Row>;

const COLUMNS =
  'input_guardrail_ids, output_guardrail_ids, input_excluded_workspace_ids, output_excluded_workspace_ids';

const NONE: GuardrailDefaults = {
  guardrailIds: { input: [], output: [] },
  excludedWorkspaceIds: { input: [], output: [] },
};

/** One row per organisation that ever set a default or an exclusion. */
export class GuardrailDefaultsRepository {
  constructor(private readonly manager: EntityManager) {}

  async find(organisationId: string): Promise<GuardrailDefaults> {
    const [row] = (await this.manager.query(
      `SELECT ${COLUMNS} FROM admin.organisation_guardrail_defaults WHERE organisation_id = $1`,
      [organisationId],
    )) as Row[];
    return row ? defaultsOf(row) : NONE;
  }

  /** Replaces the defaults of the phases given (undefined keeps a phase as it is). */
  async setGuardrails(
    organisationId: string,
    ids: Partial<Record<GuardrailPhase, string[]>>,
    updatedBy: string,
  ): Promise<GuardrailDefaults> {
    const [row] = (await this.manager.query(
      `INSERT INTO admin.organisation_guardrail_defaults AS current
         (organisation_id, input_guardrail_ids, output_guardrail_ids, updated_at, updated_by)
       VALUES ($1, coalesce($2::uuid[], '{}'), coalesce($3::uuid[], '{}'), now(), $4)
       ON CONFLICT (organisation_id) DO UPDATE
         SET input_guardrail_ids = coalesce($2::uuid[], current.input_guardrail_ids),
             output_guardrail_ids = coalesce($3::uuid[], current.output_guardrail_ids),
             updated_at = now(), updated_by = $4
       RETURNING ${COLUMNS}`,
      [organisationId, ids.input ?? null, ids.output ?? null, updatedBy],
    )) as Row[];
    return defaultsOf(row!);
  }

  /**
   * Adds the workspaces to the phase's exclusions (each once, those already there keeping
   * their place), or with `replace` makes them the whole list. One statement: the row is
   * locked while it is merged, so concurrent additions all survive.
   */
  async excludeWorkspaces(
    organisationId: string,
    phase: GuardrailPhase,
    workspaceIds: string[],
    replace: boolean,
    updatedBy: string,
  ): Promise<string[]> {
    const column = EXCLUDED_COLUMN[phase];
    const [row] = (await this.manager.query(
      `INSERT INTO admin.organisation_guardrail_defaults AS current
         (organisation_id, ${column}, updated_at, updated_by)
       VALUES ($1, $2::uuid[], now(), $4)
       ON CONFLICT (organisation_id) DO UPDATE
         SET ${column} = CASE WHEN $3::boolean THEN $2::uuid[] ELSE ARRAY(
               SELECT listed.id FROM unnest(current.${column} || $2::uuid[]) WITH ORDINALITY AS listed(id, position)
               GROUP BY listed.id ORDER BY min(listed.position)) END,
             updated_at = now(), updated_by = $4
       RETURNING ${column} AS workspace_ids`,
      [organisationId, workspaceIds, replace, updatedBy],
    )) as Array<{ workspace_ids: string[] }>;
    return row!.workspace_ids;
  }
}

function defaultsOf(row: Row): GuardrailDefaults {
  return {
    guardrailIds: { input: row.input_guardrail_ids, output: row.output_guardrail_ids },
    excludedWorkspaceIds: {
      input: row.input_excluded_workspace_ids,
      output: row.output_excluded_workspace_ids,
    },
  };
}
