/**
 * The bulk path of the logs scale scenario: request logs written with `COPY ... FROM STDIN`,
 * the same rows `RequestLogRepository.insertBatch` stores (bulk-store.contract.test.ts holds
 * it to that), at a fraction of the cost. Logs must not repeat: a log stored twice fails the
 * whole COPY on the primary key. Rollups are then made by the rollup job, as for any logs.
 */
import type { ScratchDatabase } from '@switchyard/adapters';
import type { RequestLog } from '../../../services/log-export/src/store/entities.ts';

/** What this module needs of a pg client: `query` of a submittable, and `release` to its pool. */
interface PgClient {
  query(submittable: CopyIn): unknown;
  release(err?: Error | boolean): void;
}

/** What this module needs of pg's connection: the COPY sub-protocol's messages. */
interface PgConnection {
  query(text: string): void;
  sendCopyFromChunk(chunk: Buffer): void;
  endCopyFrom(): void;
}

/**
 * `COPY ... FROM STDIN` as a pg submittable: pg's client hands it the connection once the
 * server asks for the data, and calls it back on the outcome.
 */
class CopyIn {
  readonly done: Promise<void>;
  private resolve!: () => void;
  private reject!: (err: Error) => void;

  constructor(
    private readonly text: string,
    private readonly data: Buffer,
  ) {
    this.done = new Promise<void>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  submit(connection: PgConnection): void {
    connection.query(this.text);
  }

  handleCopyInResponse(connection: PgConnection): void {
    // The protocol's CopyData messages are at most 1 GiB; 1 MiB pieces stay well below.
    for (let at = 0; at < this.data.length; at += 1 << 20) {
      connection.sendCopyFromChunk(this.data.subarray(at, at + (1 << 20)));
    }
    connection.endCopyFrom();
  }

  handleCommandComplete(): void {}

  handleReadyForQuery(): void {
    this.resolve();
  }

  handleError(err: Error): void {
    this.reject(err);
  }
}

const SPECIAL = /[\\\n\r\t]/;
const SPECIALS = /[\\\n\r\t]/g;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** A text value in COPY's text format; null is `\N`. */
function text(value: string | null): string {
  if (value === null) return '\\N';
  return SPECIAL.test(value) ? value.replace(SPECIALS, (c) => ESCAPES[c]!) : value;
}

/** A jsonb value as `insertBatch` hands it over (a JSON null is SQL NULL there too). */
function json(value: unknown): string {
  return value === null || value === undefined ? '\\N' : text(JSON.stringify(value));
}

const bool = (value: boolean): string => (value ? 't' : 'f');

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function uuid(value: string): string {
  if (!UUID.test(value)) throw new Error(`not a UUID: ${value}`);
  return value;
}

/** The columns `insertBatch` writes, each as COPY's text format spells the log's value. */
const LOG_COLUMNS: Array<[string, (log: RequestLog) => string]> = [
  ['id', (l) => text(l.id)],
  ['organisation_id', (l) => l.organisationId],
  ['workspace_id', (l) => l.workspaceId],
  ['api_key_id', (l) => l.apiKeyId],
  ['trace_id', (l) => text(l.traceId)],
  ['span_id', (l) => text(l.spanId)],
  ['parent_span_id', (l) => text(l.parentSpanId)],
  ['span_name', (l) => text(l.spanName)],
  ['metadata', (l) => json(l.metadata)],
  ['method', (l) => text(l.method)],
  ['path', (l) => text(l.path)],
  ['provider', (l) => text(l.provider)],
  ['model', (l) => text(l.model)],
  ['integration_slug', (l) => text(l.integrationSlug)],
  ['status', (l) => String(l.status)],
  ['stream', (l) => bool(l.stream)],
  ['created_at', (l) => l.createdAt.toISOString()],
  ['latency_ms', (l) => String(l.latencyMs)],
  ['request_body', (l) => text(l.requestBody)],
  ['response_body', (l) => text(l.responseBody)],
  ['usage', (l) => json(l.usage)],
  ['cost', (l) => String(l.cost)],
  ['error_message', (l) => text(l.errorMessage)],
  ['cache_status', (l) => text(l.cacheStatus)],
  ['config_slug', (l) => text(l.configSlug)],
  ['route_path', (l) => text(l.routePath)],
  ['retry_count', (l) => String(l.retryCount)],
  ['cache_namespace', (l) => text(l.cacheNamespace)],
  ['cache_force_refresh', (l) => bool(l.cacheForceRefresh)],
  ['models_endpoint', (l) => bool(l.modelsEndpoint)],
  ['policy', (l) => json(l.policy)],
  ['guardrails', (l) => json(l.guardrails)],
];

function copyData<T>(columns: Array<[string, (row: T) => string]>, rows: readonly T[]): Buffer {
  const lines: string[] = [];
  for (const row of rows) lines.push(columns.map(([, value]) => value(row)).join('\t'));
  lines.push('');
  return Buffer.from(lines.join('\n'));
}

const COPY_LOGS = `COPY log_export.request_logs (${LOG_COLUMNS.map(([c]) => c).join(', ')}) FROM STDIN`;

/**
 * Stores logs not stored yet, and notes their workspaces as `insertBatch` does, in one
 * transaction on a connection of the pool. Logs with the same id must not repeat (unlike
 * `insertBatch`, which skips them, COPY fails on them).
 */
export async function bulkStore(ds: ScratchDatabase['ds'], logs: readonly RequestLog[]): Promise<void> {
  if (logs.length === 0) return;
  const pool = (ds.driver as unknown as { master: { connect(): Promise<PgClient> } }).master;
  const logData = copyData(LOG_COLUMNS, logs);
  // Ids of the logs' scopes (UUIDs, as the rows hold them), written out as literals.
  const scopes = [...new Set(logs.map((l) => `('${uuid(l.organisationId)}', '${uuid(l.workspaceId)}')`))];
  const noteWorkspaces = `INSERT INTO log_export.log_workspaces (organisation_id, workspace_id)
    VALUES ${scopes.sort().join(', ')} ON CONFLICT DO NOTHING`;
  const client = await pool.connect();
  let failed: Error | undefined;
  try {
    const run = (statement: string, data: Buffer) => {
      const copy = new CopyIn(statement, data);
      client.query(copy);
      return copy.done;
    };
    await run('BEGIN', Buffer.alloc(0));
    try {
      await run(COPY_LOGS, logData);
      await run(noteWorkspaces, Buffer.alloc(0));
      await run('COMMIT', Buffer.alloc(0));
    } catch (err) {
      await run('ROLLBACK', Buffer.alloc(0));
      throw err;
    }
  } catch (err) {
    failed = err as Error;
    throw err;
  } finally {
    client.release(failed);
  }
}
