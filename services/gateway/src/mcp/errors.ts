import type { AppError } from '@switchyard/core';
import { ErrorCode, type JSONRPCErrorResponse, type RequestId } from '@modelcontextprotocol/sdk/types.js';

/**
 * The JSON-RPC error codes the MCP gateway answers with, in JSON-RPC's range for
 * implementation-defined server errors (-32000 to -32099), besides JSON-RPC's own
 * (ErrorCode: -32700 parse error, -32600 invalid request, -32602 invalid params). Each
 * error's `data` carries the HTTP status the same refusal has on the model-call routes
 * (`status`), the error `type` and `code` of the one error shape, and what else it needs
 * (`retry_after_seconds`, `policy_id`, `hook_results`).
 *
 * | code   | meaning                                                         | data.status |
 * |--------|-----------------------------------------------------------------|-------------|
 * | -32003 | forbidden: the server or tool is not allowed to the caller      | 403         |
 * | -32004 | not found: no such MCP server in the caller's workspace         | 404         |
 * | -32029 | a rate or usage limit refused the tool call                     | 429         |
 * | -32046 | a guardrail denied the call's arguments or its result           | 446         |
 * | -32050 | unavailable: the upstream (or a service the call needs) is down | 502 / 503   |
 * | -32052 | the upstream failed (an error status, or an answer not MCP)     | 502         |
 */
export const McpGatewayError = {
  Forbidden: -32003,
  NotFound: -32004,
  RateLimited: -32029,
  GuardrailDenied: -32046,
  Unavailable: -32050,
  UpstreamFailed: -32052,
  ParseError: ErrorCode.ParseError,
  InvalidRequest: ErrorCode.InvalidRequest,
  InvalidParams: ErrorCode.InvalidParams,
} as const;

export type McpGatewayErrorCode = (typeof McpGatewayError)[keyof typeof McpGatewayError];

/** A refusal of a JSON-RPC request, answered as a JSON-RPC error. */
export class McpRefusal extends Error {
  constructor(
    readonly code: McpGatewayErrorCode,
    message: string,
    /** The `data` of the error: status, type, code and the rest. */
    readonly data: { status: number; type: string; code: string } & Record<string, unknown>,
    /** The HTTP status a refusal answered outside a JSON-RPC exchange takes (auth, body). */
    readonly httpStatus = 200,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'McpRefusal';
  }

  /** The JSON-RPC error response to the request of `id`. */
  toResponse(id: RequestId | undefined): JSONRPCErrorResponse {
    return {
      jsonrpc: '2.0',
      ...(id === undefined ? {} : { id }),
      error: { code: this.code, message: this.message, data: this.data },
    } as JSONRPCErrorResponse;
  }
}

export function forbidden(message: string, code = 'mcp_tool_forbidden', httpStatus = 200): McpRefusal {
  return new McpRefusal(
    McpGatewayError.Forbidden,
    message,
    { status: 403, type: 'permission_error', code },
    httpStatus,
  );
}

export function notFound(message: string): McpRefusal {
  return new McpRefusal(
    McpGatewayError.NotFound,
    message,
    { status: 404, type: 'not_found_error', code: 'mcp_server_not_found' },
    404,
  );
}

export function unavailable(message: string, code = 'mcp_upstream_unavailable', status = 502): McpRefusal {
  return new McpRefusal(McpGatewayError.Unavailable, message, { status, type: 'api_error', code });
}

export function upstreamFailed(message: string, upstreamStatus?: number): McpRefusal {
  return new McpRefusal(McpGatewayError.UpstreamFailed, message, {
    status: 502,
    type: 'api_error',
    code: 'mcp_upstream_failed',
    ...(upstreamStatus === undefined ? {} : { upstream_status: upstreamStatus }),
  });
}

export function invalid(
  code: typeof McpGatewayError.ParseError | typeof McpGatewayError.InvalidRequest,
  message: string,
): McpRefusal {
  return new McpRefusal(
    code,
    message,
    {
      status: 400,
      type: 'invalid_request_error',
      code: code === ErrorCode.ParseError ? 'parse_error' : 'invalid_request',
    },
    400,
  );
}

export function invalidParams(message: string): McpRefusal {
  return new McpRefusal(McpGatewayError.InvalidParams, message, {
    status: 400,
    type: 'invalid_request_error',
    code: 'invalid_params',
  });
}

/**
 * A refusal of the gateway's own (a policy's, a guardrail's) as a JSON-RPC error: 429 → -32029
 * with `retry_after_seconds` (and `Retry-After` when answered in JSON), 446 → -32046 with the
 * guardrails' verdicts, a service that cannot answer (503) → -32050.
 */
export function refusalOf(err: AppError): McpRefusal {
  const data = {
    status: err.status,
    type: err.type,
    code: err.code ?? '',
    ...(err.details ?? {}),
  };
  if (err.status === 429) {
    const retryAfter = err.headers['retry-after'];
    return new McpRefusal(
      McpGatewayError.RateLimited,
      err.message,
      {
        ...data,
        ...(retryAfter === undefined ? {} : { retry_after_seconds: Number(retryAfter) }),
        ...('policyId' in err && typeof err.policyId === 'string' && err.policyId !== ''
          ? { policy_id: err.policyId }
          : {}),
      },
      200,
      retryAfter === undefined ? {} : { 'retry-after': retryAfter },
    );
  }
  if (err.status === 446) return new McpRefusal(McpGatewayError.GuardrailDenied, err.message, data);
  if (err.status === 403) return new McpRefusal(McpGatewayError.Forbidden, err.message, data);
  return new McpRefusal(McpGatewayError.Unavailable, err.message, data);
}
