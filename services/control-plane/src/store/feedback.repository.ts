import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { isUuid } from '../domain/ids.ts';

/* SQL only: one INSERT for every entry of a request, one UPDATE ... RETURNING for a change. */

/** Feedback on the requests of one trace id, as control-plane keeps it. */
export interface Feedback {
  id: string;
  organisationId: string;
  /** Null for feedback of the organisation (an organisation admin key that named no workspace). */
  workspaceId: string | null;
  traceId: string;
  value: number;
  weight: number;
  metadata: Record<string, unknown>;
  /** 1 when created, one more per update: what orders the events of one feedback. */
  version: number;
  /** The user, else the API key, that sent it. */
  createdBy: string;
  createdAt: Date;
  updatedAt: Date;
}

export type NewFeedback = Pick<
  Feedback,
  'organisationId' | 'workspaceId' | 'traceId' | 'value' | 'weight' | 'metadata' | 'createdBy'
>;

export interface FeedbackChanges {
  value: number;
  weight?: number | undefined;
  metadata?: Record<string, unknown> | undefined;
}

interface FeedbackRow {
  id: string;
  organisation_id: string;
  workspace_id: string | null;
  trace_id: string;
  value: number;
  weight: number;
  metadata: Record<string, unknown>;
  version: number;
  created_by: string;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = `id, organisation_id, workspace_id, trace_id, value, weight, metadata, version, created_by, created_at, updated_at`;

function fromRow(row: FeedbackRow): Feedback {
  return {
    id: row.id,
    organisationId: row.organisation_id,
    workspaceId: row.workspace_id,
    traceId: row.trace_id,
    value: row.value,
    weight: Number(row.weight),
    metadata: row.metadata,
    version: row.version,
    createdBy: row.created_by,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export class FeedbackRepository {
  constructor(private readonly manager: EntityManager) {}

  /** All of them or none (one statement), answered in the order given. */
  async insertAll(entries: readonly NewFeedback[]): Promise<Feedback[]> {
    if (entries.length === 0) return [];
    const params: unknown[] = [];
    const tuples = entries.map((entry, position) => {
      const base = params.length;
      params.push(
        randomUUID(),
        entry.organisationId,
        entry.workspaceId,
        entry.traceId,
        entry.value,
        entry.weight,
        JSON.stringify(entry.metadata),
        entry.createdBy,
        position,
      );
      const types = ['uuid', 'uuid', 'uuid', 'text', 'int', 'float8', 'jsonb', 'uuid', 'int'];
      return `(${types.map((type, i) => `$${base + i + 1}::${type}`).join(', ')})`;
    });
    const rows = (await this.manager.query(
      `WITH given (id, organisation_id, workspace_id, trace_id, value, weight, metadata, created_by, position) AS (
         VALUES ${tuples.join(', ')}
       ), inserted AS (
         INSERT INTO control_plane.feedback (id, organisation_id, workspace_id, trace_id, value, weight, metadata, created_by)
         SELECT id, organisation_id, workspace_id, trace_id, value, weight, metadata, created_by FROM given
         RETURNING ${COLUMNS}
       )
       SELECT inserted.* FROM inserted JOIN given USING (id) ORDER BY given.position`,
      params,
    )) as FeedbackRow[];
    return rows.map(fromRow);
  }

  /**
   * Applies the changes to feedback of the organisation and, for `workspaceId`, of that
   * workspace only; null when there is none such. Concurrent updates apply one after the
   * other (the row lock), each numbering its version.
   */
  async update(
    scope: { organisationId: string; workspaceId: string | null },
    id: string,
    changes: FeedbackChanges,
  ): Promise<Feedback | null> {
    if (!isUuid(id)) return null;
    const rows = (await this.manager.query(
      `UPDATE control_plane.feedback
          SET value = $4,
              weight = coalesce($5::float8, weight),
              metadata = coalesce($6::jsonb, metadata),
              version = version + 1,
              updated_at = greatest(now(), updated_at)
        WHERE id = $1 AND organisation_id = $2 AND ($3::uuid IS NULL OR workspace_id = $3::uuid)
        RETURNING ${COLUMNS}`,
      [
        id,
        scope.organisationId,
        scope.workspaceId,
        changes.value,
        changes.weight ?? null,
        changes.metadata === undefined ? null : JSON.stringify(changes.metadata),
      ],
    )) as [FeedbackRow[], number];
    // TypeORM answers an UPDATE as [rows returned, rows affected].
    const [updated] = rows[0];
    return updated ? fromRow(updated) : null;
  }
}
