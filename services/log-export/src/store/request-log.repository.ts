import type { EntityManager } from 'typeorm';
import { RequestLogEntity, type RequestLog } from './entities.ts';
import { hoursOf, lockHoursShared, touchHours } from './rollups.ts';

/** The columns of a log, as the rows handed to Postgres name them. */
function rowOf(log: RequestLog) {
  return {
    id: log.id,
    organisation_id: log.organisationId,
    workspace_id: log.workspaceId,
    api_key_id: log.apiKeyId,
    trace_id: log.traceId,
    span_id: log.spanId,
    parent_span_id: log.parentSpanId,
    span_name: log.spanName,
    metadata: log.metadata,
    method: log.method,
    path: log.path,
    provider: log.provider,
    model: log.model,
    integration_slug: log.integrationSlug,
    status: log.status,
    stream: log.stream,
    created_at: log.createdAt.toISOString(),
    latency_ms: log.latencyMs,
    request_body: log.requestBody,
    response_body: log.responseBody,
    usage: log.usage,
    cost: log.cost,
    error_message: log.errorMessage,
    cache_status: log.cacheStatus,
    config_slug: log.configSlug,
    route_path: log.routePath,
    retry_count: log.retryCount,
    cache_namespace: log.cacheNamespace,
    cache_force_refresh: log.cacheForceRefresh,
    models_endpoint: log.modelsEndpoint,
    policy: log.policy,
    guardrails: log.guardrails,
    w3c_trace_id: log.w3cTraceId,
    mcp: log.mcp,
    prompt: log.prompt,
  };
}

const COLUMNS = Object.keys(rowOf({ createdAt: new Date(0) } as RequestLog)).join(', ');

/** The rows of a batch come as one JSON parameter: one statement, whatever the batch's size. */
const INSERT_LOGS = `
  INSERT INTO log_export.request_logs (${COLUMNS})
  SELECT ${COLUMNS} FROM json_populate_recordset(NULL::log_export.request_logs, $1::json)
  ON CONFLICT DO NOTHING
  RETURNING id`;

/** The workspaces that have logs, for the searches of a whole organisation. */
const NOTE_WORKSPACES = `
  INSERT INTO log_export.log_workspaces (organisation_id, workspace_id)
  SELECT DISTINCT o, w FROM unnest($1::uuid[], $2::uuid[]) AS s(o, w) ORDER BY o, w
  ON CONFLICT DO NOTHING`;

export class RequestLogRepository {
  constructor(private readonly manager: EntityManager) {}

  /** Inserts once; a replayed event with the same id changes nothing. */
  async insertOnce(log: RequestLog): Promise<boolean> {
    return (await this.insertBatch([log])).length > 0;
  }

  /**
   * Stores a batch of logs in one transaction, those not stored before (a replayed log is
   * neither stored nor counted again), and marks the hours they fall in for the rollup job
   * (see store/rollups.ts). Returns the logs stored now. One row the database rejects fails
   * the whole batch.
   */
  async insertBatch(logs: RequestLog[]): Promise<RequestLog[]> {
    const byId = new Map<string, RequestLog>();
    for (const log of logs) if (!byId.has(log.id)) byId.set(log.id, log);
    if (byId.size === 0) return [];
    return this.manager.transaction(async (m) => {
      await lockHoursShared(m, hoursOf([...byId.values()].map((log) => log.createdAt)));
      const inserted: Array<{ id: string }> = await m.query(INSERT_LOGS, [
        JSON.stringify([...byId.values()].map(rowOf)),
      ]);
      const stored = inserted.map((row) => byId.get(row.id)!);
      if (stored.length === 0) return stored;
      const scopes = new Map(stored.map((log) => [`${log.organisationId}/${log.workspaceId}`, log]));
      await m.query(NOTE_WORKSPACES, [
        [...scopes.values()].map((log) => log.organisationId),
        [...scopes.values()].map((log) => log.workspaceId),
      ]);
      await touchHours(m, hoursOf(stored.map((log) => log.createdAt)));
      return stored;
    });
  }

  /** By id alone (the API knows no time): each day's partition is searched through its primary key. */
  async find(
    id: string,
    scope: { organisationId: string; workspaceId: string | null },
  ): Promise<RequestLog | null> {
    return this.manager
      .getRepository(RequestLogEntity)
      .findOneBy(
        scope.workspaceId
          ? { id, organisationId: scope.organisationId, workspaceId: scope.workspaceId }
          : { id, organisationId: scope.organisationId },
      );
  }
}
