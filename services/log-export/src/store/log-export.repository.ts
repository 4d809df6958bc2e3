import type { EntityManager } from 'typeorm';

/* SQL only: log exports, every change of state one conditional UPDATE, so that concurrent writes are atomic. */

export type ExportStatus = 'draft' | 'in_progress' | 'success' | 'failed' | 'stopped';

export interface LogExport {
  id: string;
  organisationId: string;
  /** Null: every workspace of the organisation (an organisation admin key's export). */
  workspaceId: string | null;
  /** The user that made it, else the API key. */
  createdBy: string;
  /** The user that made it; null when made by a key of no user. */
  userId: string | null;
  description: string;
  /** The filters as the API took them (wire form). */
  filters: Record<string, unknown>;
  requestedData: string[];
  status: ExportStatus;
  /** How many logs the filters matched when it was created, updated or started. */
  total: number;
  /** How many logs the current or last run wrote. */
  exported: number;
  bytes: number | null;
  fileKey: string | null;
  error: string | null;
  /** One more each time the export is started: a run's writes never land on a later run. */
  run: number;
  createdAt: Date;
  lastUpdatedAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}

/** Whose exports a caller sees: its organisation's, its workspace's when it has one, its own when a user's key. */
export interface ExportScope {
  organisationId: string;
  workspaceId: string | null;
  userId: string | null;
}

/** A running export as one process holds it. */
export interface ExportClaim {
  id: string;
  run: number;
  runner: string;
}

interface Row {
  id: string;
  organisation_id: string;
  workspace_id: string | null;
  created_by: string;
  user_id: string | null;
  description: string;
  filters: Record<string, unknown>;
  requested_data: string[];
  status: ExportStatus;
  total: string;
  exported: string;
  bytes: string | null;
  file_key: string | null;
  error: string | null;
  run: number;
  created_at: Date;
  last_updated_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

function fromRow(row: Row): LogExport {
  return {
    id: row.id,
    organisationId: row.organisation_id,
    workspaceId: row.workspace_id,
    createdBy: row.created_by,
    userId: row.user_id,
    description: row.description,
    filters: row.filters,
    requestedData: row.requested_data,
    status: row.status,
    total: Number(row.total),
    exported: Number(row.exported),
    bytes: row.bytes === null ? null : Number(row.bytes),
    fileKey: row.file_key,
    error: row.error,
    run: row.run,
    createdAt: row.created_at,
    lastUpdatedAt: row.last_updated_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
  };
}

/** The conditions that keep a caller to its own exports, from parameter `$first` on. */
function scopeOf(scope: ExportScope, first: number): { sql: string; params: unknown[] } {
  return {
    sql: `organisation_id = $${first} AND archived_at IS NULL
          AND ($${first + 1}::uuid IS NULL OR workspace_id = $${first + 1}::uuid)
          AND ($${first + 2}::uuid IS NULL OR user_id = $${first + 2}::uuid)`,
    params: [scope.organisationId, scope.workspaceId, scope.userId],
  };
}

export interface ExportChanges {
  filters?: Record<string, unknown>;
  requestedData?: string[];
  description?: string;
  total?: number;
}

export class LogExportRepository {
  constructor(private readonly manager: EntityManager) {}

  async insert(
    record: Omit<LogExport, 'exported' | 'bytes' | 'fileKey' | 'error' | 'run' | 'startedAt' | 'finishedAt'>,
  ): Promise<void> {
    await this.manager.query(
      `INSERT INTO log_export.log_exports (id, organisation_id, workspace_id, created_by, user_id, description,
         filters, requested_data, status, total, created_at, last_updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
      [
        record.id,
        record.organisationId,
        record.workspaceId,
        record.createdBy,
        record.userId,
        record.description,
        JSON.stringify(record.filters),
        record.requestedData,
        record.status,
        record.total,
        record.createdAt,
        record.lastUpdatedAt,
      ],
    );
  }

  async find(scope: ExportScope, id: string): Promise<LogExport | null> {
    const where = scopeOf(scope, 2);
    const rows = (await this.manager.query(
      `SELECT * FROM log_export.log_exports WHERE id = $1 AND ${where.sql}`,
      [id, ...where.params],
    )) as Row[];
    return rows[0] ? fromRow(rows[0]) : null;
  }

  /** An export that is not archived, whoever's: for a signed link, which is its own proof. */
  async findAny(id: string): Promise<LogExport | null> {
    const rows = (await this.manager.query(
      `SELECT * FROM log_export.log_exports WHERE id = $1 AND archived_at IS NULL`,
      [id],
    )) as Row[];
    return rows[0] ? fromRow(rows[0]) : null;
  }

  /** Newest first; with how many there are in all. */
  async list(scope: ExportScope, page: { limit: number; offset: number }): Promise<[LogExport[], number]> {
    const where = scopeOf(scope, 1);
    const rows = (await this.manager.query(
      `SELECT *, count(*) OVER () AS all_rows FROM log_export.log_exports WHERE ${where.sql}
        ORDER BY created_at DESC, id DESC LIMIT $4 OFFSET $5`,
      [...where.params, page.limit, page.offset],
    )) as Array<Row & { all_rows: string }>;
    if (rows.length === 0 && page.offset > 0) {
      const [row] = (await this.manager.query(
        `SELECT count(*) AS n FROM log_export.log_exports WHERE ${where.sql}`,
        where.params,
      )) as Array<{ n: string }>;
      return [[], Number(row?.n ?? 0)];
    }
    return [rows.map(fromRow), Number(rows[0]?.all_rows ?? 0)];
  }

  /** Changes an export that is not running (back to a draft: its file no longer matches it); null when it runs or is not found. */
  async update(scope: ExportScope, id: string, changes: ExportChanges, at: Date): Promise<LogExport | null> {
    const where = scopeOf(scope, 7);
    const rows = (await this.manager.query(
      `UPDATE log_export.log_exports SET
          filters = COALESCE($2::jsonb, filters),
          requested_data = COALESCE($3::text[], requested_data),
          description = COALESCE($4, description),
          total = COALESCE($5, total),
          status = 'draft', exported = 0, bytes = NULL, error = NULL, started_at = NULL, finished_at = NULL,
          last_updated_at = $6
        WHERE id = $1 AND status <> 'in_progress' AND ${where.sql}
        RETURNING *`,
      [
        id,
        changes.filters === undefined ? null : JSON.stringify(changes.filters),
        changes.requestedData ?? null,
        changes.description ?? null,
        changes.total ?? null,
        at,
        ...where.params,
      ],
    )) as [Row[], number];
    return rows[0][0] ? fromRow(rows[0][0]) : null;
  }

  /** Sets an export that is not running to run (again, from the start); null when it runs already or is not found. */
  async start(scope: ExportScope, id: string, total: number, at: Date): Promise<LogExport | null> {
    const where = scopeOf(scope, 4);
    const rows = (await this.manager.query(
      `UPDATE log_export.log_exports SET
          status = 'in_progress', run = run + 1, total = $2, exported = 0, bytes = NULL, error = NULL,
          runner = NULL, lease_until = NULL, started_at = $3, finished_at = NULL, last_updated_at = $3
        WHERE id = $1 AND status <> 'in_progress' AND ${where.sql}
        RETURNING *`,
      [id, total, at, ...where.params],
    )) as [Row[], number];
    return rows[0][0] ? fromRow(rows[0][0]) : null;
  }

  /** Stops a running export; its runner sees it at its next batch. Null when it is not running or not found. */
  async cancel(scope: ExportScope, id: string, at: Date): Promise<LogExport | null> {
    const where = scopeOf(scope, 3);
    const rows = (await this.manager.query(
      `UPDATE log_export.log_exports SET status = 'stopped', runner = NULL, lease_until = NULL,
          finished_at = $2, last_updated_at = $2
        WHERE id = $1 AND status = 'in_progress' AND ${where.sql}
        RETURNING *`,
      [id, at, ...where.params],
    )) as [Row[], number];
    return rows[0][0] ? fromRow(rows[0][0]) : null;
  }

  /** Archives an export that is not running: hidden from then on. Null when it runs or is not found. */
  async archive(scope: ExportScope, id: string, at: Date): Promise<LogExport | null> {
    const where = scopeOf(scope, 3);
    const rows = (await this.manager.query(
      `UPDATE log_export.log_exports SET archived_at = $2, last_updated_at = $2
        WHERE id = $1 AND status <> 'in_progress' AND ${where.sql}
        RETURNING *`,
      [id, at, ...where.params],
    )) as [Row[], number];
    return rows[0][0] ? fromRow(rows[0][0]) : null;
  }

  /**
   * Takes one running export that no process holds (never claimed, or its holder's lease ran
   * out) for `runner`, from its start; null when there is none. Two processes never take the same one.
   */
  async claim(runner: string, leaseMs: number): Promise<LogExport | null> {
    const rows = (await this.manager.query(
      `UPDATE log_export.log_exports e SET runner = $1,
          lease_until = clock_timestamp() + make_interval(secs => $2::double precision / 1000),
          exported = 0, last_updated_at = clock_timestamp()
        WHERE e.id = (
          SELECT id FROM log_export.log_exports
           WHERE status = 'in_progress' AND archived_at IS NULL
             AND (lease_until IS NULL OR lease_until < clock_timestamp())
           ORDER BY started_at LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING e.*`,
      [runner, leaseMs],
    )) as [Row[], number];
    return rows[0][0] ? fromRow(rows[0][0]) : null;
  }

  /** Records progress and renews the lease; false when the run is no longer this runner's (cancelled, restarted, taken over). */
  async progress(claim: ExportClaim, exported: number, leaseMs: number): Promise<boolean> {
    const [, changed] = (await this.manager.query(
      `UPDATE log_export.log_exports SET exported = $4,
          lease_until = clock_timestamp() + make_interval(secs => $5::double precision / 1000),
          last_updated_at = clock_timestamp()
        WHERE id = $1 AND run = $2 AND runner = $3 AND status = 'in_progress'`,
      [claim.id, claim.run, claim.runner, exported, leaseMs],
    )) as [unknown, number];
    return changed === 1;
  }

  /** Ends a run that wrote its whole file; false when the run was no longer this runner's. */
  async succeed(
    claim: ExportClaim,
    result: { exported: number; bytes: number; fileKey: string },
  ): Promise<boolean> {
    const [, changed] = (await this.manager.query(
      `UPDATE log_export.log_exports SET status = 'success', exported = $4, bytes = $5, file_key = $6,
          runner = NULL, lease_until = NULL, finished_at = clock_timestamp(), last_updated_at = clock_timestamp()
        WHERE id = $1 AND run = $2 AND runner = $3 AND status = 'in_progress'`,
      [claim.id, claim.run, claim.runner, result.exported, result.bytes, result.fileKey],
    )) as [unknown, number];
    return changed === 1;
  }

  async fail(claim: ExportClaim, error: string): Promise<boolean> {
    const [, changed] = (await this.manager.query(
      `UPDATE log_export.log_exports SET status = 'failed', error = $4,
          runner = NULL, lease_until = NULL, finished_at = clock_timestamp(), last_updated_at = clock_timestamp()
        WHERE id = $1 AND run = $2 AND runner = $3 AND status = 'in_progress'`,
      [claim.id, claim.run, claim.runner, error.slice(0, 1024)],
    )) as [unknown, number];
    return changed === 1;
  }

  /** Lets go of a runner's exports at once (a process stopping), so that another takes them over without waiting for the lease. */
  async release(runner: string): Promise<void> {
    await this.manager.query(
      `UPDATE log_export.log_exports SET runner = NULL, lease_until = NULL
        WHERE runner = $1 AND status = 'in_progress'`,
      [runner],
    );
  }
}
