import { createHash, randomUUID } from 'node:crypto';
import { BadRequest, NotFound } from '@switchyard/core';
import type { Principal } from '@switchyard/access';
import type { MessageInitShape } from '@bufbuild/protobuf';
import type { events } from '@switchyard/proto';
import type { RequestLog } from '../store/entities.ts';
import type { Feedback, FeedbackRepository } from '../store/feedback.repository.ts';
import type {
  RequestLogFilter,
  RequestLogKey,
  RequestLogSearch,
  RequestLogSummary,
} from '../store/request-log.search.ts';
import {
  DEFAULT_PAGE_SIZE,
  METADATA_PARAMETER,
  type CustomLogInput,
  type ListLogsQuery,
} from './log-search.schemas.ts';
import type { RequestLogService } from './request-logs.ts';

const HOUR_MS = 3_600_000;
/** The time range a list covers when not given, and the longest it may cover. */
export const DEFAULT_RANGE_MS = 24 * HOUR_MS;
export const MAX_RANGE_MS = 31 * 24 * HOUR_MS;

/** The metadata key that names the user a request was made for. */
export const USER_METADATA_KEY = '_user';
/** Metadata keys of a custom log that are its trace, kept in the log's own fields. */
const TRACE_KEYS = ['trace_id', 'span_id', 'parent_span_id', 'span_name'] as const;

type RequestLogEventInit = MessageInitShape<typeof events.RequestLogEventSchema>;

/** A log with the feedback on its trace that its workspace may see. */
export type WithFeedback<T> = T & { feedback: Feedback[] };

export interface LogPage {
  logs: Array<WithFeedback<RequestLogSummary>>;
  /** Null on the last page. */
  nextCursor: string | null;
}

/** What a cursor holds: where the page ended, the time range of the first page, and whose query it was. */
interface Cursor {
  /** The query's fingerprint (see `fingerprintOf`). */
  q: string;
  from: number;
  to: number;
  at: string;
  id: string;
}

/** Where custom logs go: the request log topic, as the gateway publishes its own. */
export type RequestLogPublisher = (event: RequestLogEventInit) => void;

/** Hosts of providers' APIs, for the provider of a custom log; another host is named itself. */
const PROVIDER_HOSTS: Array<[RegExp, string]> = [
  [/^api\.openai\.com$/, 'openai'],
  [/^api\.anthropic\.com$/, 'anthropic'],
  [/^generativelanguage\.googleapis\.com$/, 'google'],
  [/\.openai\.azure\.com$/, 'azure-openai'],
  [/^bedrock-runtime\.[\w-]+\.amazonaws\.com$/, 'bedrock'],
  [/^api\.groq\.com$/, 'groq'],
  [/^api\.mistral\.ai$/, 'mistral-ai'],
  [/^api\.together\.xyz$/, 'together-ai'],
  [/^api\.deepseek\.com$/, 'deepseek'],
  [/^api\.fireworks\.ai$/, 'fireworks-ai'],
  [/^openrouter\.ai$/, 'openrouter'],
];

export function providerOfHost(host: string): string {
  return PROVIDER_HOSTS.find(([pattern]) => pattern.test(host))?.[1] ?? host;
}

/** A custom log's path is the absolute URL it went to; the gateway's own are paths of its API. */
export function isCustomLog(log: Pick<RequestLog, 'path'>): boolean {
  return /^https?:\/\//.test(log.path);
}

/**
 * The query as it narrows the list, the caller's organisation and workspace with it: a cursor
 * carries it, so that a cursor of another query or caller is refused rather than misread.
 */
function fingerprintOf(principal: Principal, query: ListLogsQuery): string {
  const { cursor: _cursor, limit: _limit, ...filters } = query;
  const entries = Object.entries(filters)
    .filter(([, value]) => value !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHash('sha256')
    .update(JSON.stringify([principal.organisationId, principal.workspaceId, entries]))
    .digest('base64url')
    .slice(0, 22);
}

function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify(cursor)).toString('base64url');
}

const badCursor = (why: string) =>
  new BadRequest(`Invalid query parameter 'cursor': ${why}`, { param: 'cursor', code: 'invalid_parameter' });

function decodeCursor(text: string, fingerprint: string): Cursor {
  let cursor: Partial<Cursor>;
  try {
    cursor = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Partial<Cursor>;
  } catch {
    throw badCursor('not a cursor this API gave');
  }
  const valid =
    cursor !== null &&
    typeof cursor === 'object' &&
    typeof cursor.q === 'string' &&
    Number.isSafeInteger(cursor.from) &&
    Number.isSafeInteger(cursor.to) &&
    typeof cursor.at === 'string' &&
    /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/.test(cursor.at) &&
    typeof cursor.id === 'string' &&
    cursor.id.length <= 1024;
  if (!valid) throw badCursor('not a cursor this API gave');
  if (cursor.q !== fingerprint) {
    throw badCursor('a cursor of another query: send the filters of the page it came with');
  }
  return cursor as Cursor;
}

/** The time range of a first page: as given, else the DEFAULT_RANGE_MS up to now; at most MAX_RANGE_MS. */
function rangeOf(query: ListLogsQuery, now: Date): { from: Date; to: Date } {
  const to = query.end_time ?? now;
  const from = query.start_time ?? new Date(to.getTime() - DEFAULT_RANGE_MS);
  if (from.getTime() >= to.getTime()) {
    throw new BadRequest(
      `Invalid query parameter 'end_time': must be later than start_time (end_time is now when not given).`,
      { param: 'end_time', code: 'invalid_parameter' },
    );
  }
  if (to.getTime() - from.getTime() > MAX_RANGE_MS) {
    throw new BadRequest(
      `Invalid query parameter 'start_time': at most 31 days before end_time (end_time is now when not given).`,
      { param: 'start_time', code: 'invalid_parameter' },
    );
  }
  return { from, to };
}

/** The feedback a log of `workspaceId` shows: its workspace's and the organisation's own. */
function visibleTo(feedback: Feedback[] | undefined, workspaceId: string): Feedback[] {
  return (feedback ?? []).filter((f) => f.workspaceId === null || f.workspaceId === workspaceId);
}

/** The usage a custom log's response reports, in OpenAI's terms or Anthropic's. */
function usageOf(body: unknown): RequestLogEventInit['usage'] {
  const usage =
    body !== null && typeof body === 'object' && !Array.isArray(body)
      ? (body as { usage?: unknown }).usage
      : undefined;
  if (usage === null || typeof usage !== 'object') return undefined;
  const count = (value: unknown) =>
    typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 0xffffffff ? value : 0;
  const u = usage as Record<string, unknown>;
  const promptTokens = count(u.prompt_tokens) || count(u.input_tokens);
  const completionTokens = count(u.completion_tokens) || count(u.output_tokens);
  const totalTokens = count(u.total_tokens) || promptTokens + completionTokens;
  return { promptTokens, completionTokens, totalTokens };
}

function modelOf(body: unknown): string {
  const model =
    body !== null && typeof body === 'object' && !Array.isArray(body)
      ? (body as { model?: unknown }).model
      : undefined;
  return typeof model === 'string' ? model.slice(0, 256) : '';
}

/** The request log event of a custom log: the gateway's own shape, its path the URL it went to. */
export function customLogEvent(
  principal: Principal & { workspaceId: string },
  log: CustomLogInput,
  now: Date,
) {
  const url = new URL(log.request.url);
  const metadata = { ...(log.metadata ?? {}) };
  const trace: Partial<Record<(typeof TRACE_KEYS)[number], string>> = {};
  for (const key of TRACE_KEYS) {
    if (metadata[key] !== undefined) {
      trace[key] = metadata[key];
      delete metadata[key];
    }
  }
  const status = log.response.status ?? 200;
  const text = (body: unknown) => (typeof body === 'string' ? body : JSON.stringify(body));
  return {
    id: randomUUID(),
    organisationId: principal.organisationId,
    workspaceId: principal.workspaceId,
    apiKeyId: principal.apiKeyId,
    traceId: trace.trace_id ?? '',
    spanId: trace.span_id ?? '',
    parentSpanId: trace.parent_span_id ?? '',
    spanName: trace.span_name ?? '',
    metadata,
    method: log.request.method ?? 'POST',
    // Without the query string or credentials in the URL: either may carry an API key.
    path: `${url.protocol}//${url.host}${url.pathname}`,
    provider: providerOfHost(url.hostname),
    model: modelOf(log.request.body) || modelOf(log.response.body),
    status,
    stream: false,
    createdAtMs: String(now.getTime()),
    latencyMs: log.response.response_time ?? 0,
    requestBody: text(log.request.body),
    responseBody: text(log.response.body),
    usage: usageOf(log.response.body),
    cost: 0,
  } satisfies RequestLogEventInit;
}

/**
 * The logs API: search, one log in full, and custom logs. Every read is of the caller's
 * organisation, and of its workspace for a workspace key; a log shows the feedback on its
 * trace that its workspace may see.
 */
export class LogSearchService {
  constructor(
    private readonly logs: Pick<RequestLogService, 'get'>,
    private readonly search: Pick<RequestLogSearch, 'page'>,
    private readonly feedback: Pick<FeedbackRepository, 'forTraces'>,
    private readonly publish: RequestLogPublisher,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async get(principal: Principal, id: string): Promise<WithFeedback<RequestLog>> {
    const log = await this.logs.get(principal, id);
    if (log.traceId === null) return { ...log, feedback: [] };
    const byTrace = await this.feedback.forTraces(principal.organisationId, [log.traceId], log.workspaceId);
    return { ...log, feedback: byTrace.get(log.traceId) ?? [] };
  }

  async list(principal: Principal, query: ListLogsQuery): Promise<LogPage> {
    const fingerprint = fingerprintOf(principal, query);
    let range: { from: Date; to: Date };
    let after: RequestLogKey | undefined;
    if (query.cursor !== undefined) {
      // Later pages keep the first page's time range: a default one does not move with the clock.
      const cursor = decodeCursor(query.cursor, fingerprint);
      range = { from: new Date(cursor.from), to: new Date(cursor.to) };
      after = { at: cursor.at, id: cursor.id };
    } else {
      range = rangeOf(query, this.now());
    }
    const filter: RequestLogFilter = {
      organisationId: principal.organisationId,
      workspaceId: this.workspaceOf(principal, query.workspace_id),
      ...range,
      statuses: query.status,
      models: query.model,
      providers: query.provider,
      traceId: query.trace_id,
      metadata: this.metadataOf(query),
      apiKeyId: query.api_key_id,
      costMin: query.cost_min,
      costMax: query.cost_max,
      latencyMin: query.latency_min,
      latencyMax: query.latency_max,
      cacheStatuses: query.cache_status,
      guardrailActions: query.guardrail_action,
      policyDecisions: query.policy_decision,
      mcpServers: query.mcp_server,
      toolNames: query.tool_name,
      promptIds: query.prompt_id,
      configSlugs: query.config,
    };
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    // One more than the page: whether there is a next page, without a count.
    const rows = await this.search.page(filter, after, limit + 1);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    const nextCursor =
      rows.length > limit && last
        ? encodeCursor({
            q: fingerprint,
            from: range.from.getTime(),
            to: range.to.getTime(),
            at: last.key.at,
            id: last.key.id,
          })
        : null;
    const traceIds = page.flatMap((log) => (log.traceId === null ? [] : [log.traceId]));
    const byTrace = await this.feedback.forTraces(
      principal.organisationId,
      traceIds,
      principal.workspaceId ?? undefined,
    );
    return {
      logs: page.map((log) => ({
        ...log,
        feedback: log.traceId === null ? [] : visibleTo(byTrace.get(log.traceId), log.workspaceId),
      })),
      nextCursor,
    };
  }

  /**
   * Publishes custom logs as the gateway publishes its own, so that they are stored, rolled up
   * and searched the same way; answers their ids in request order. A workspace key's only (a
   * log belongs to a workspace).
   */
  createCustom(principal: Principal, entries: readonly CustomLogInput[]): string[] {
    const { workspaceId } = principal;
    if (workspaceId === null) {
      throw new BadRequest('Custom logs belong to a workspace: send them with a workspace API key.', {
        code: 'workspace_key_required',
      });
    }
    const now = this.now();
    const logs = entries.map((entry) => customLogEvent({ ...principal, workspaceId }, entry, now));
    for (const log of logs) this.publish(log);
    return logs.map((log) => log.id);
  }

  /** A workspace key's own workspace always; another it names is not found. */
  private workspaceOf(principal: Principal, named: string | undefined): string | null {
    if (principal.workspaceId === null) return named ?? null;
    if (named !== undefined && named !== principal.workspaceId) {
      throw new NotFound(`Workspace '${named}' not found.`);
    }
    return principal.workspaceId;
  }

  private metadataOf(query: ListLogsQuery): Record<string, string> | undefined {
    const metadata: Record<string, string> = {};
    for (const [key, value] of Object.entries(query)) {
      const metadataKey = METADATA_PARAMETER.exec(key)?.[1];
      if (metadataKey !== undefined && typeof value === 'string') metadata[metadataKey] = value;
    }
    if (query.user !== undefined) metadata[USER_METADATA_KEY] = query.user;
    return Object.keys(metadata).length > 0 ? metadata : undefined;
  }
}
