import type { EntityManager } from 'typeorm';
import { lockHoursShared, touchHours } from './rollups.ts';

/* SQL only: an upsert that keeps the newest version, and one read of many trace ids. */

/** Feedback on the requests of a trace id, as the request logs show it. */
export interface Feedback {
  id: string;
  organisationId: string;
  /** Null for feedback of the organisation (sent by an organisation admin key naming no workspace). */
  workspaceId: string | null;
  traceId: string;
  value: number;
  weight: number;
  metadata: Record<string, unknown>;
  /** 1 when created, one more per update: the higher one is the newer. */
  version: number;
  /** The user, else the API key, that sent it. */
  createdBy: string;
  createdAt: Date;
  updatedAt: Date;
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

  /**
   * Stores the feedback unless a version as new or newer is stored already: an event
   * delivered twice, or after a newer one, changes nothing. True when it was stored.
   */
  async upsertNewest(feedback: Feedback): Promise<boolean> {
    return this.manager.transaction(async (m) => {
      const rows = (await m.query(
        `INSERT INTO log_export.feedback AS stored
         (id, organisation_id, workspace_id, trace_id, value, weight, metadata, version, created_by, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9, $10, $11)
       ON CONFLICT (id) DO UPDATE SET
         value = EXCLUDED.value,
         weight = EXCLUDED.weight,
         metadata = EXCLUDED.metadata,
         version = EXCLUDED.version,
         updated_at = EXCLUDED.updated_at
       WHERE stored.version < EXCLUDED.version AND stored.organisation_id = EXCLUDED.organisation_id
       RETURNING id`,
        [
          feedback.id,
          feedback.organisationId,
          feedback.workspaceId,
          feedback.traceId,
          feedback.value,
          feedback.weight,
          JSON.stringify(feedback.metadata),
          feedback.version,
          feedback.createdBy,
          feedback.createdAt,
          feedback.updatedAt,
        ],
      )) as Array<{ id: string }>;
      if (rows.length === 0) return false;
      // The hours of the trace's requests are rolled up again with it (see store/rollups.ts).
      const rowsOfHours = (await m.query(
        `SELECT DISTINCT date_trunc('hour', created_at, 'UTC') AS bucket FROM log_export.request_logs
          WHERE trace_id = $1 AND organisation_id = $2 ORDER BY 1`,
        [feedback.traceId, feedback.organisationId],
      )) as Array<{ bucket: Date }>;
      const hours = rowsOfHours.map((h) => h.bucket);
      await lockHoursShared(m, hours);
      await touchHours(m, hours);
      return true;
    });
  }

  /**
   * The feedback of the organisation on these trace ids, by trace id, each trace's oldest
   * first. With `workspaceId`, that workspace's and the organisation's own only: what a log
   * of that workspace shows.
   */
  async forTraces(
    organisationId: string,
    traceIds: readonly string[],
    workspaceId?: string,
  ): Promise<Map<string, Feedback[]>> {
    const byTrace = new Map<string, Feedback[]>();
    const wanted = [...new Set(traceIds)];
    if (wanted.length === 0) return byTrace;
    const rows = (await this.manager.query(
      `SELECT id, organisation_id, workspace_id, trace_id, value, weight, metadata, version, created_by, created_at, updated_at
         FROM log_export.feedback
        WHERE organisation_id = $1 AND trace_id = ANY($2::text[])
          AND ($3::uuid IS NULL OR workspace_id IS NULL OR workspace_id = $3::uuid)
        ORDER BY trace_id, created_at, id`,
      [organisationId, wanted, workspaceId ?? null],
    )) as FeedbackRow[];
    for (const row of rows) {
      const feedback = fromRow(row);
      const list = byTrace.get(feedback.traceId);
      if (list) list.push(feedback);
      else byTrace.set(feedback.traceId, [feedback]);
    }
    return byTrace;
  }
}
