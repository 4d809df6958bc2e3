import { randomUUID } from 'node:crypto';
import type { RequestLog } from '../store/entities.ts';

/**
 * A stored request log for tests: a successful, unstreamed gpt-4o chat completion through
 * openai of 10 + 5 tokens in 100 ms, costing nothing, with no trace, metadata, cache, config,
 * policy, guardrail verdicts, W3C trace or MCP call; `fields` over it.
 */
export function storedRequestLog(
  fields: Pick<RequestLog, 'organisationId' | 'workspaceId' | 'createdAt'> & Partial<RequestLog>,
): RequestLog {
  return {
    id: randomUUID(),
    apiKeyId: randomUUID(),
    traceId: null,
    spanId: null,
    parentSpanId: null,
    spanName: null,
    metadata: {},
    method: 'POST',
    path: '/v1/chat/completions',
    provider: 'openai',
    model: 'gpt-4o',
    integrationSlug: null,
    status: 200,
    stream: false,
    latencyMs: 100,
    requestBody: '{}',
    responseBody: '{}',
    usage: {
      prompt_tokens: 10,
      completion_tokens: 5,
      total_tokens: 15,
      cached_tokens: 0,
      reasoning_tokens: 0,
    },
    cost: 0,
    errorMessage: null,
    cacheStatus: null,
    configSlug: null,
    routePath: null,
    retryCount: 0,
    cacheNamespace: null,
    cacheForceRefresh: false,
    modelsEndpoint: false,
    policy: null,
    guardrails: [],
    w3cTraceId: null,
    mcp: null,
    prompt: null,
    ...fields,
  };
}
