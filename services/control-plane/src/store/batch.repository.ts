import type { EntityManager } from 'typeorm';
import type { PageQuery } from '@switchyard/core';

/* SQL only: one upsert for a record, one UPDATE ... RETURNING for a change. */

/** A provider batch created through a gateway, as control-plane keeps it. */
export interface BatchRecord {
  /** The provider's batch id. */
  id: string;
  organisationId: string;
  workspaceId: string;
  /** The key that created it; null for a JWT or OAuth caller. */
  apiKeyId: string | null;
  provider: string;
  integrationSlug: string;
  status: string;
  endpoint: string;
  inputFileId: string;
  outputFileId: string;
  errorFileId: string;
  internalOutputFileId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** What a gateway tells of a batch; empty strings are "not known" and keep the stored value. */
export type BatchReport = Omit<
  BatchRecord,
  'createdAt' | 'updatedAt' | 'internalOutputFileId' | 'apiKeyId'
> & {
  apiKeyId: string;
  internalOutputFileId: string;
};

export interface BatchFilter {
  status?: string | undefined;
  provider?: string | undefined;
  integrationSlug?: string | undefined;
}

/** Statuses a batch does not leave: a late answer of an earlier status does not move it back. */
export const FINAL_STATUSES = ['completed', 'failed', 'expired', 'cancelled'] as const;

type Row = Record<string, unknown>;

const T = 'control_plane.batches';

function fromRow(row: Row): BatchRecord {
  return {
    id: row.id as string,
    organisationId: row.organisation_id as string,
    workspaceId: row.workspace_id as string,
    apiKeyId: (row.api_key_id as string | null) ?? null,
    provider: row.provider as string,
    integrationSlug: row.integration_slug as string,
    status: row.status as string,
    endpoint: row.endpoint as string,
    inputFileId: row.input_file_id as string,
    outputFileId: row.output_file_id as string,
    errorFileId: row.error_file_id as string,
    internalOutputFileId: (row.internal_output_file_id as string | null) ?? null,
    createdAt: row.created_at as Date,
    updatedAt: row.updated_at as Date,
  };
}

const FINAL = `ARRAY[${FINAL_STATUSES.map((s) => `'${s}'`).join(', ')}]`;

export class BatchRepository {
  constructor(private readonly manager: EntityManager) {}

  /**
   * Creates the record of a batch, or updates it: one statement, so concurrent reports of one
   * batch apply one after the other. Where it went and who created it (provider, integration,
   * endpoint, input file, key) are kept as first recorded; status and file ids follow the
   * newest non-empty report, except that a final status stays. `created_at` never moves. A
   * batch id another workspace of the organisation recorded is left alone: null.
   */
  async record(report: BatchReport): Promise<BatchRecord | null> {
    const keep = (column: string) => `coalesce(nullif(${T}.${column}, ''), EXCLUDED.${column})`;
    const follow = (column: string) => `coalesce(nullif(EXCLUDED.${column}, ''), ${T}.${column})`;
    const rows: Row[] = await this.manager.query(
      `INSERT INTO ${T} AS b (organisation_id, id, workspace_id, api_key_id, provider, integration_slug, status,
                              endpoint, input_file_id, output_file_id, error_file_id, internal_output_file_id)
       VALUES ($1, $2, $3, nullif($4, ''), $5, $6, $7, $8, $9, $10, $11, nullif($12, ''))
       ON CONFLICT (organisation_id, id) DO UPDATE SET
         api_key_id = coalesce(b.api_key_id, EXCLUDED.api_key_id),
         provider = ${keep('provider')},
         integration_slug = ${keep('integration_slug')},
         endpoint = ${keep('endpoint')},
         input_file_id = ${keep('input_file_id')},
         status = CASE WHEN EXCLUDED.status = '' OR b.status = ANY(${FINAL}) THEN b.status ELSE EXCLUDED.status END,
         output_file_id = ${follow('output_file_id')},
         error_file_id = ${follow('error_file_id')},
         internal_output_file_id = coalesce(EXCLUDED.internal_output_file_id, b.internal_output_file_id),
         updated_at = now()
       WHERE b.workspace_id = EXCLUDED.workspace_id
       RETURNING *`.replaceAll(`${T}.`, 'b.'),
      [
        report.organisationId,
        report.id,
        report.workspaceId,
        report.apiKeyId,
        report.provider,
        report.integrationSlug,
        report.status,
        report.endpoint,
        report.inputFileId,
        report.outputFileId,
        report.errorFileId,
        report.internalOutputFileId,
      ],
    );
    return rows[0] ? fromRow(rows[0]) : null;
  }

  /** The record of a batch of the workspace; null when it has none. */
  async find(organisationId: string, workspaceId: string, id: string): Promise<BatchRecord | null> {
    const rows: Row[] = await this.manager.query(
      `SELECT * FROM ${T} WHERE organisation_id = $1 AND workspace_id = $2 AND id = $3`,
      [organisationId, workspaceId, id],
    );
    return rows[0] ? fromRow(rows[0]) : null;
  }

  /** The workspace's records, newest first. */
  async list(
    organisationId: string,
    workspaceId: string,
    filter: BatchFilter,
    page: PageQuery,
  ): Promise<[BatchRecord[], number]> {
    const params: unknown[] = [organisationId, workspaceId];
    const where = ['organisation_id = $1', 'workspace_id = $2'];
    const match = (column: string, value: string | undefined) => {
      if (value === undefined) return;
      params.push(value);
      where.push(`${column} = $${params.length}`);
    };
    match('status', filter.status);
    match('provider', filter.provider);
    match('integration_slug', filter.integrationSlug);
    const total: Row[] = await this.manager.query(
      `SELECT count(*)::int AS n FROM ${T} WHERE ${where.join(' AND ')}`,
      params,
    );
    const rows: Row[] = await this.manager.query(
      `SELECT * FROM ${T} WHERE ${where.join(' AND ')}
        ORDER BY created_at DESC, id LIMIT ${page.limit} OFFSET ${page.offset}`,
      params,
    );
    return [rows.map(fromRow), total[0]!.n as number];
  }

  /** Sets (or, with null, clears) the gateway's id of the output file; null when the workspace has no such batch. */
  async setInternalOutputFile(
    organisationId: string,
    workspaceId: string,
    id: string,
    fileId: string | null,
  ): Promise<BatchRecord | null> {
    const [rows] = (await this.manager.query(
      `UPDATE ${T} SET internal_output_file_id = $4, updated_at = now()
        WHERE organisation_id = $1 AND workspace_id = $2 AND id = $3
        RETURNING *`,
      [organisationId, workspaceId, id, fileId],
    )) as [Row[], number];
    // TypeORM answers an UPDATE as [rows returned, rows affected].
    return rows[0] ? fromRow(rows[0]) : null;
  }
}
