import { NotFound } from '@switchyard/core';
import type { Principal } from '@switchyard/access';
import type { events } from '@switchyard/proto';
import type { RequestLog, RequestLogMcp, RequestLogPrompt } from '../store/entities.ts';
import type { RequestLogRepository } from '../store/request-log.repository.ts';

/** Postgres text and jsonb cannot hold U+0000; it becomes U+FFFD so that the log can still be stored. */
function storable(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;
}

/**
 * Keys whose values are credentials: HTTP authorization, provider API keys (as an inline
 * config or a provider's own body field may carry them), secrets, passwords and tokens.
 * `max_tokens` and the like are not: the whole key must match.
 */
const SECRET_KEY =
  /^(?:(?:proxy[-_]?)?authori[sz]ation|(?:x[-_]?)?api[-_]?key|[a-z0-9_-]*secret[a-z0-9_-]*|password|passwd|(?:access|refresh|session|bearer|id|auth)[-_]?token|private[-_]?key)$/i;
/** A cheap look at the raw text first: most bodies hold no such key and are not parsed. */
const MAY_HOLD_SECRET =
  /"(?:(?:proxy[-_]?)?authori[sz]ation|(?:x[-_]?)?api[-_]?key|[a-z0-9_-]*secret[a-z0-9_-]*|password|passwd|(?:access|refresh|session|bearer|id|auth)[-_]?token|private[-_]?key)"\s*:/i;
export const STRIPPED_SECRET = '[stripped]';

function stripSecrets(value: unknown): boolean {
  let stripped = false;
  if (Array.isArray(value)) {
    for (const item of value) stripped = stripSecrets(item) || stripped;
  } else if (value !== null && typeof value === 'object') {
    const object = value as Record<string, unknown>;
    for (const [key, inner] of Object.entries(object)) {
      if (SECRET_KEY.test(key) && inner !== null && inner !== '' && inner !== STRIPPED_SECRET) {
        object[key] = STRIPPED_SECRET;
        stripped = true;
      } else {
        stripped = stripSecrets(inner) || stripped;
      }
    }
  }
  return stripped;
}

/**
 * A JSON request body with the value of every credential-like key, at any depth, replaced by
 * STRIPPED_SECRET; a body without one (or not JSON) is kept as sent, byte for byte.
 */
export function withoutSecrets(body: string): string {
  if (!MAY_HOLD_SECRET.test(body)) return body;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return body;
  }
  return stripSecrets(parsed) ? JSON.stringify(parsed) : body;
}

/** The MCP call of a log, as stored; null for a request that was not one. */
function mcpOf(mcp: events.McpCall | undefined): RequestLogMcp | null {
  if (!mcp) return null;
  return {
    server_id: storable(mcp.serverId),
    server_slug: storable(mcp.serverSlug),
    integration_slug: storable(mcp.integrationSlug) || null,
    method: storable(mcp.method),
    tool_name: storable(mcp.toolName) || null,
    error_code: mcp.errorCode === 0 ? null : mcp.errorCode,
    tool_error: mcp.toolError,
    session_id: storable(mcp.sessionId) || null,
  };
}

/** The saved prompt of a log, as stored; null for a request that ran none. */
function promptOf(prompt: events.PromptRun | undefined): RequestLogPrompt | null {
  if (!prompt) return null;
  return {
    prompt_id: storable(prompt.promptId),
    prompt_slug: storable(prompt.promptSlug),
    version_id: storable(prompt.versionId),
    version_number: prompt.versionNumber,
  };
}

export function requestLogFromEvent(event: events.RequestLogEvent): RequestLog {
  const usage = event.usage;
  const mcp = mcpOf(event.mcp);
  return {
    id: storable(event.id),
    organisationId: event.organisationId,
    workspaceId: event.workspaceId,
    apiKeyId: event.apiKeyId,
    traceId: storable(event.traceId) || null,
    spanId: storable(event.spanId) || null,
    parentSpanId: storable(event.parentSpanId) || null,
    spanName: storable(event.spanName) || null,
    metadata: Object.fromEntries(
      Object.entries(event.metadata).map(([key, value]) => [storable(key), storable(value)]),
    ),
    method: storable(event.method),
    path: storable(event.path),
    // An MCP call counts in analytics as any request: provider `mcp`, the tool (or method) as model.
    provider: storable(event.provider) || (mcp ? 'mcp' : null),
    model: storable(event.model) || (mcp ? (mcp.tool_name ?? mcp.method) || null : null),
    integrationSlug: storable(event.integrationSlug) || null,
    status: event.status,
    stream: event.stream,
    createdAt: new Date(Number(event.createdAtMs)),
    latencyMs: event.latencyMs,
    requestBody: storable(withoutSecrets(event.requestBody)),
    responseBody: storable(event.responseBody),
    usage: {
      prompt_tokens: usage?.promptTokens ?? 0,
      completion_tokens: usage?.completionTokens ?? 0,
      total_tokens: usage?.totalTokens ?? 0,
      cached_tokens: usage?.cachedTokens ?? 0,
      reasoning_tokens: usage?.reasoningTokens ?? 0,
    },
    cost: event.cost,
    errorMessage: storable(event.errorMessage) || null,
    cacheStatus: storable(event.cacheStatus) || null,
    configSlug: storable(event.configSlug) || null,
    routePath: storable(event.routePath) || null,
    retryCount: event.retryCount,
    cacheNamespace: storable(event.cacheNamespace) || null,
    cacheForceRefresh: event.cacheForceRefresh,
    modelsEndpoint: event.modelsEndpoint,
    policy: event.policy
      ? {
          decision: storable(event.policy.decision),
          policy_id: storable(event.policy.policyId) || null,
          code: storable(event.policy.code) || null,
          adjustments: event.policy.adjustments.map((a) => ({
            policy_id: storable(a.policyId),
            type: storable(a.type),
            held: a.held,
            used: a.used,
          })),
        }
      : null,
    w3cTraceId: storable(event.w3cTraceId) || null,
    mcp,
    prompt: promptOf(event.prompt),
    guardrails: event.guardrails.map((g) => ({
      phase: storable(g.phase),
      guardrail_id: storable(g.guardrailId),
      slug: storable(g.slug),
      version_id: storable(g.versionId),
      action: storable(g.action),
      explanation: storable(g.explanation),
      redactions: g.redactions,
      duration_ms: g.durationMs,
      checks: g.checks.map((c) => ({
        id: storable(c.id),
        name: storable(c.name),
        passed: c.passed,
        explanation: storable(c.explanation),
        error: storable(c.error) || null,
      })),
    })),
  };
}

export class RequestLogService {
  constructor(private readonly repo: RequestLogRepository) {}

  /** Idempotent: replaying the topic creates no duplicates. */
  record(event: events.RequestLogEvent): Promise<boolean> {
    return this.repo.insertOnce(requestLogFromEvent(event));
  }

  /** Stores a batch at once, idempotently; returns how many logs were new. */
  async recordAll(batch: events.RequestLogEvent[]): Promise<number> {
    return (await this.repo.insertBatch(batch.map(requestLogFromEvent))).length;
  }

  /** Workspace keys see their workspace's logs; another workspace's log is "not found". */
  async get(principal: Principal, id: string): Promise<RequestLog> {
    const log = await this.repo.find(id, {
      organisationId: principal.organisationId,
      workspaceId: principal.workspaceId,
    });
    if (!log) throw new NotFound(`Log '${id}' not found.`);
    return log;
  }
}
