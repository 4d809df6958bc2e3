import { once } from 'node:events';
import type { Request, Response } from 'express';
import { errors as undiciErrors, type Dispatcher } from 'undici';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import {
  CallToolRequestSchema,
  JSONRPCMessageSchema,
  ListToolsResultSchema,
  isJSONRPCErrorResponse,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import {
  AppError,
  SpanKind,
  failSpan,
  requestTraceId,
  runInContext,
  startSpan,
  tracingEnabled,
  withTraceHeaders,
  type Logger,
  type Span,
} from '@switchyard/core';
import { REQUEST_ID_HEADER } from '@switchyard/http';
import type { Principal } from '@switchyard/access';
import type { EventBus } from '@switchyard/adapters';
import type { mcp } from '@switchyard/proto';
import type { McpServerSource } from '../clients/mcp-directory.ts';
import type { GatewayHeaders } from '../domain/gateway-headers.ts';
import {
  checkInput,
  checkOutput,
  type CheckFacts,
  type GuardrailRun,
  type GuardrailSource,
  type LoadedGuardrail,
} from '../domain/guardrails.ts';
import type { WebhookContext } from '../domain/guardrail-webhook.ts';
import { PolicyRefusal, type PolicyHold } from '../domain/policy.ts';
import type { GuardrailWebhookClient, PolicyCheck } from '../domain/ports.ts';
import { publishRequestEvents } from '../events/request-events.ts';
import type { PolicyOutcomeFields } from '../events/encoding.ts';
import { readGatewayHeaders } from '../http/gateway-headers.ts';
import type { GatewayMetrics, McpOutcome } from '../metrics/gateway-metrics.ts';
import type { ProviderTokenSource } from '../upstream/provider-tokens.ts';
import { sessionOwner, type McpSessions } from './sessions.ts';
import type { ProviderTarget } from '../providers/types.ts';
import { accessOf, toolCost, toolGuardrails, type McpAccess } from './access.ts';
import {
  McpGatewayError,
  McpRefusal,
  forbidden,
  invalid,
  invalidParams,
  notFound,
  refusalOf,
  unavailable,
  upstreamFailed,
} from './errors.ts';
import { resultUnits, stringLeaves } from './texts.ts';

/** The largest JSON answer of an upstream that is read (and governed) whole. */
const MAX_UPSTREAM_JSON_BYTES = 32 * 2 ** 20;

/** Request headers of MCP's streamable HTTP transport, passed to the upstream as they came. */
const TRANSPORT_HEADERS = ['mcp-session-id', 'mcp-protocol-version', 'last-event-id'] as const;

/** Never passed upstream, whatever a server's passthrough list says: the caller's credentials and hop-by-hop headers. */
const NEVER_PASSED = new Set([
  'authorization',
  'cookie',
  'host',
  'connection',
  'content-length',
  'transfer-encoding',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'proxy-authorization',
]);

export interface McpGatewayOptions {
  servers: McpServerSource;
  /** Rate and usage limits of target `mcp_tools`; undefined: none are checked. */
  policy: PolicyCheck | undefined;
  guardrails: GuardrailSource;
  webhooks?: GuardrailWebhookClient | undefined;
  bus: EventBus;
  metrics: GatewayMetrics;
  logger: Logger;
  /** The dispatcher a server's URL is reached through (untrusted hosts: the address check at connect). */
  dispatcherFor(url: string): Dispatcher;
  /** OAuth client-credentials tokens for upstreams that authenticate so. */
  tokens?: ProviderTokenSource | undefined;
  /** The deadline of one request to the upstream, and of each wait for a stream's next bytes. */
  requestTimeoutMs: number;
  headerPrefix: string;
  /** Binds each MCP session to the caller that began it; undefined: sessions are not bound. */
  sessions?: McpSessions | undefined;
}

/** What the gateway knows of the caller and the server once the request may go on. */
interface Admitted {
  principal: Principal & { workspaceId: string };
  server: mcp.McpServerRoute;
  access: McpAccess;
  headers: GatewayHeaders;
}

/** One JSON-RPC request through the gateway, as its log records it. */
interface Exchange {
  admitted: Admitted;
  startedAt: number;
  createdAtMs: number;
  requestId: string;
  w3cTraceId: string | undefined;
  path: string;
  id: RequestId;
  method: string;
  toolName: string;
  requestBody: string;
  runs: GuardrailRun[];
  hold: PolicyHold | undefined;
  policy: PolicyOutcomeFields | undefined;
  cost: number;
  sessionId: string;
  logged: boolean;
  /** The request's span, while tracing is on. */
  span: Span | undefined;
}

/** Turns the result of the request being governed into what the client gets; throws an McpRefusal to refuse it. */
type Transform = (result: Record<string, unknown>) => Promise<Record<string, unknown>>;

/**
 * The MCP gateway: MCP's streamable HTTP transport at `/mcp/{slug}`, passed through to the
 * server's upstream with the server's auth. It is JSON-RPC aware, not a server of its own: the
 * requests it governs (tools/call, tools/list) are checked and their answers transformed;
 * everything else (other requests, notifications, the server's own requests and
 * notifications, event streams) passes as it came. Every JSON-RPC request is logged and
 * counted.
 */
export class McpGateway {
  constructor(private readonly options: McpGatewayOptions) {}

  /**
   * The server the request names, in the caller's workspace, and what the caller may do with
   * it. Throws an McpRefusal: 404 for a server of no workspace of the caller's, 403 for one
   * the caller may not use.
   */
  async admit(req: Request, principal: Principal & { workspaceId: string }): Promise<Admitted> {
    const slug = String(req.params.slug);
    let server: mcp.McpServerRoute | null;
    try {
      server = await this.options.servers.find(principal.organisationId, slug);
    } catch (err) {
      if (err instanceof AppError && err.status === 501) {
        throw new McpRefusal(
          McpGatewayError.Unavailable,
          'MCP servers are not built yet in this control plane.',
          { status: 501, type: 'not_implemented_error', code: 'not_implemented' },
          501,
        );
      }
      this.options.logger.warn('the MCP directory cannot be read', { error: String(err) });
      throw unavailable('MCP servers cannot be read right now.', 'mcp_directory_unavailable', 503);
    }
    if (!server || server.workspaceId !== principal.workspaceId) {
      throw notFound(`MCP server '${slug}' does not exist in this workspace.`);
    }
    const access = accessOf(server, principal);
    const sessionId = headerText(req.headers['mcp-session-id']);
    if (
      sessionId &&
      this.options.sessions &&
      !(await this.options.sessions.mayUse(server.id, sessionId, sessionOwner(principal)))
    ) {
      throw new McpRefusal(
        McpGatewayError.NotFound,
        'The MCP session does not exist: it ended, or another caller began it. Begin a new one with initialize.',
        { status: 404, type: 'not_found_error', code: 'mcp_session_not_found' },
        404,
      );
    }
    let headers: GatewayHeaders;
    try {
      headers = readGatewayHeaders(req, this.options.headerPrefix);
    } catch (err) {
      throw invalid(McpGatewayError.InvalidRequest, err instanceof Error ? err.message : String(err));
    }
    return { principal, server, access, headers };
  }

  /** POST: one JSON-RPC message from the client. */
  async post(req: Request, res: Response, admitted: Admitted): Promise<void> {
    const message = parseMessage(req.body);
    if (!isJSONRPCRequest(message)) {
      refuseServer(admitted);
      // A notification, or the client's answer to the server's request: passed as it came.
      const upstream = await this.send(
        admitted.server,
        req,
        res,
        'POST',
        Buffer.from(JSON.stringify(message)),
      );
      await this.relay(upstream, res);
      return;
    }
    const exchange = this.exchangeOf(req, res, admitted, message);
    // A span per JSON-RPC request while tracing is on; the upstream is told it (traceparent).
    const traced = tracingEnabled()
      ? startSpan(message.method, SpanKind.CLIENT, {
          'mcp.method.name': message.method,
          'mcp.server.slug': admitted.server.slug,
          'jsonrpc.request.id': String(message.id),
        })
      : undefined;
    exchange.span = traced?.span;
    const exchanged = () => this.exchange(req, res, exchange, message);
    await (traced ? runInContext(traced.context, exchanged) : exchanged());
  }

  private async exchange(
    req: Request,
    res: Response,
    exchange: Exchange,
    message: JSONRPCRequest,
  ): Promise<void> {
    const { admitted } = exchange;
    try {
      // A caller who may use nothing on the server: refused (403), and logged as any request.
      refuseServer(admitted);
      const { outgoing, transform } = await this.govern(exchange, message, req);
      let upstream: Dispatcher.ResponseData;
      try {
        upstream = await this.send(admitted.server, req, res, 'POST', Buffer.from(JSON.stringify(outgoing)));
      } catch (err) {
        this.settle(exchange, false);
        throw err;
      }
      await this.answer(upstream, exchange, transform, res);
    } catch (err) {
      const refusal = this.refusalFrom(err);
      this.settle(exchange, false);
      this.finish(exchange, refusal.data.status, undefined, refusal);
      if (!res.headersSent) {
        res.status(refusal.httpStatus).set(refusal.headers).json(refusal.toResponse(exchange.id));
      } else if (!res.writableEnded) {
        res.end();
      }
    }
  }

  /** GET (the server's event stream) and DELETE (the end of a session): passed through. */
  async passThrough(req: Request, res: Response, admitted: Admitted): Promise<void> {
    refuseServer(admitted);
    const stream = req.method === 'GET';
    const upstream = await this.send(admitted.server, req, res, stream ? 'GET' : 'DELETE', undefined, stream);
    const sessionId = headerText(req.headers['mcp-session-id']);
    if (!stream && sessionId && upstream.statusCode < 300) {
      await this.options.sessions?.end(admitted.server.id, sessionId);
    }
    await this.relay(upstream, res);
  }

  /** What a tools/call is checked against before it goes upstream, and how its answer is checked. */
  private async govern(
    exchange: Exchange,
    message: JSONRPCRequest,
    req: Request,
  ): Promise<{ outgoing: JSONRPCMessage; transform: Transform | undefined }> {
    const { server, access, principal, headers } = exchange.admitted;
    if (message.method === 'tools/list') {
      return {
        outgoing: message,
        transform: async (result) => {
          const parsed = ListToolsResultSchema.safeParse(result);
          if (!parsed.success) return result;
          const tools = (result.tools as Array<{ name?: unknown }>).filter(
            (tool) => typeof tool.name === 'string' && access.mayCall(tool.name),
          );
          return { ...result, tools };
        },
      };
    }
    if (message.method !== 'tools/call') return { outgoing: message, transform: undefined };
    const parsed = CallToolRequestSchema.safeParse(message);
    if (!parsed.success) {
      throw invalidParams(`tools/call needs params.name (a string) and params.arguments (an object).`);
    }
    const tool = parsed.data.params.name;
    exchange.toolName = tool;
    exchange.span?.updateName(`tools/call ${tool}`);
    exchange.span?.setAttribute('gen_ai.tool.name', tool);
    const args = parsed.data.params.arguments ?? {};
    if (!access.mayCall(tool)) {
      throw forbidden(`Tool '${tool}' of MCP server '${server.slug}' may not be called by this caller.`);
    }
    const guardrails = await this.guardrailsOf(server, principal, tool);
    const facts: CheckFacts = {
      model: tool,
      metadata: headers.metadata,
      requestType: 'mcp_tool_call',
      stream: false,
    };
    const webhooks = this.webhooksOf(req);
    exchange.cost = toolCost(server, tool);
    if (this.options.policy) {
      const cost = exchange.cost;
      try {
        exchange.hold = await this.options.policy.check({
          principal,
          provider: 'mcp',
          model: tool,
          metadata: headers.metadata,
          requestId: exchange.requestId,
          target: 'mcp_tools',
          mcpServer: server.slug,
          toolName: tool,
          estimate: () => ({ tokens: 0, cost }),
        });
      } catch (err) {
        if (err instanceof PolicyRefusal) {
          exchange.policy = {
            decision: err.decision,
            policyId: err.policyId,
            code: err.code ?? '',
            adjustments: [],
          };
          this.options.metrics.policyDenied('/mcp/:slug', err.reason);
        }
        throw err;
      }
    }
    let sent = args;
    if (guardrails.input.length > 0) {
      const checked = await checkInput(guardrails.input, args, stringLeaves, facts, exchange.runs, webhooks);
      this.countVerdicts(exchange.runs, 'input');
      if (checked.redacted) sent = checked.body;
    }
    // Logged once the input guardrails let it through, as the upstream gets it (redacted).
    exchange.requestBody = JSON.stringify(sent);
    const outgoing = sent === args ? message : { ...message, params: { ...message.params, arguments: sent } };
    const output = guardrails.output;
    return {
      outgoing,
      transform:
        output.length === 0
          ? undefined
          : async (result) => {
              let denied = false;
              const checked = await checkOutput(
                output,
                Buffer.from(JSON.stringify(result)),
                (json) => resultUnits(json, () => (denied = true)),
                facts,
                200,
                webhooks,
              );
              exchange.runs.push(...checked.runs);
              this.countVerdicts(checked.runs, 'output');
              if (denied) {
                const why = checked.runs
                  .filter((run) => run.action === 'deny')
                  .map((run) => `guardrail '${run.slug}' denied it: ${run.explanation}`)
                  .join('; ');
                throw new McpRefusal(
                  McpGatewayError.GuardrailDenied,
                  `The tool's result was denied by its guardrails: ${why}.`,
                  {
                    status: 446,
                    type: 'guardrail_error',
                    code: 'guardrail_denied',
                  },
                );
              }
              return checked.changed
                ? (JSON.parse(checked.body.toString('utf8')) as Record<string, unknown>)
                : result;
            },
    };
  }

  private countVerdicts(runs: readonly GuardrailRun[], phase: 'input' | 'output'): void {
    for (const run of runs) {
      if (run.phase === phase) this.options.metrics.guardrailVerdict('/mcp/:slug', phase, run.action);
    }
  }

  /** The server's and then the tool's guardrails; one that cannot be found refuses the call (never run unchecked). */
  private async guardrailsOf(
    server: mcp.McpServerRoute,
    principal: Principal & { workspaceId: string },
    tool: string,
  ): Promise<{ input: LoadedGuardrail[]; output: LoadedGuardrail[] }> {
    const ids = toolGuardrails(server, tool);
    const find = async (id: string) => {
      let found: LoadedGuardrail | undefined;
      try {
        found = await this.options.guardrails.find(principal.organisationId, principal.workspaceId, id);
      } catch {
        throw unavailable(
          'Guardrails cannot be read right now; the tool was not called.',
          'guardrails_unavailable',
          503,
        );
      }
      if (!found) {
        throw unavailable(
          `Guardrail '${id}' of MCP server '${server.slug}' does not exist; the tool was not called.`,
          'guardrail_not_found',
          503,
        );
      }
      return found;
    };
    return {
      input: await Promise.all(ids.input.map(find)),
      output: await Promise.all(ids.output.map(find)),
    };
  }

  private webhooksOf(req: Request): WebhookContext | undefined {
    const client = this.options.webhooks;
    if (!client) return undefined;
    return {
      client,
      header: (name) => {
        const value = req.headers[name];
        return Array.isArray(value) ? value[0] : value;
      },
    };
  }

  private exchangeOf(req: Request, res: Response, admitted: Admitted, message: JSONRPCRequest): Exchange {
    return {
      admitted,
      startedAt: performance.now(),
      createdAtMs: Date.now(),
      requestId: String(res.getHeader(REQUEST_ID_HEADER) ?? ''),
      w3cTraceId: requestTraceId(req.headers.traceparent),
      path: req.originalUrl.split('?')[0] ?? req.path,
      id: message.id,
      method: message.method,
      toolName:
        message.method === 'tools/call' && typeof message.params?.name === 'string'
          ? message.params.name
          : '',
      // A tool call's arguments are logged once its input guardrails have passed them (see govern).
      requestBody:
        message.params === undefined || message.method === 'tools/call' ? '' : JSON.stringify(message.params),
      runs: [],
      hold: undefined,
      policy: undefined,
      cost: 0,
      sessionId: headerText(req.headers['mcp-session-id']) ?? '',
      logged: false,
      span: undefined,
    };
  }

  /** Settles the call's reservation: the tool's cost when the upstream answered, else nothing. */
  private settle(exchange: Exchange, answered: boolean): void {
    const hold = exchange.hold;
    if (!hold) return;
    hold.settle({ tokens: 0, cost: answered ? exchange.cost : 0 });
    exchange.policy = {
      decision: hold.decision,
      policyId: hold.policyId,
      code: hold.code,
      adjustments: hold.adjustments(),
    };
  }

  /** The request to the server's upstream, with its auth and the client's transport headers. */
  private async send(
    server: mcp.McpServerRoute,
    req: Request,
    res: Response,
    method: 'GET' | 'POST' | 'DELETE',
    body: Buffer | undefined,
    stream = false,
  ): Promise<Dispatcher.ResponseData> {
    const headers: Record<string, string> = {
      accept: headerText(req.headers.accept) ?? 'application/json, text/event-stream',
    };
    if (body !== undefined) headers['content-type'] = 'application/json';
    for (const name of TRANSPORT_HEADERS) {
      const value = headerText(req.headers[name]);
      if (value !== undefined) headers[name] = value;
    }
    for (const name of server.passthroughHeaders) {
      const lower = name.toLowerCase();
      if (NEVER_PASSED.has(lower) || lower.startsWith(this.options.headerPrefix)) continue;
      const value = headerText(req.headers[lower]);
      if (value !== undefined) headers[lower] = value;
    }
    const auth = server.auth;
    if (auth?.type === 'headers') {
      for (const [name, value] of Object.entries(auth.headers)) headers[name.toLowerCase()] = value;
    } else if (auth?.type === 'oauth_client_credentials') {
      if (!this.options.tokens) throw unavailable('The upstream token cannot be fetched.');
      try {
        headers.authorization = `Bearer ${await this.options.tokens.token(tokenTarget(server))}`;
      } catch (err) {
        throw unavailable(
          `MCP server '${server.slug}': no token for its upstream (${err instanceof Error ? err.message : String(err)}).`,
        );
      }
    }
    const controller = new AbortController();
    // The client went away: the upstream request (a stream above all) goes too.
    res.once('close', () => {
      if (!res.writableFinished) controller.abort();
    });
    let url: URL;
    try {
      url = new URL(server.url);
    } catch {
      throw upstreamFailed(`MCP server '${server.slug}' has no valid upstream URL.`);
    }
    let upstream: Dispatcher.ResponseData;
    try {
      upstream = await this.options.dispatcherFor(server.url).request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method,
        headers: withTraceHeaders(headers),
        body,
        signal: controller.signal,
        headersTimeout: this.options.requestTimeoutMs,
        // A GET is the server's event stream: open as long as the client keeps it.
        bodyTimeout: stream ? 0 : this.options.requestTimeoutMs,
      });
    } catch (err) {
      if (err instanceof undiciErrors.HeadersTimeoutError) {
        throw unavailable(
          `MCP server '${server.slug}' did not answer within ${this.options.requestTimeoutMs} ms.`,
          'mcp_upstream_timeout',
          504,
        );
      }
      throw unavailable(
        `MCP server '${server.slug}' cannot be reached (${err instanceof Error ? err.message : String(err)}).`,
      );
    }
    if (upstream.statusCode === 401 && auth?.type === 'oauth_client_credentials') {
      this.options.tokens?.forget(tokenTarget(server));
    }
    return upstream;
  }

  /** Relays an upstream answer the gateway does not govern (GET, DELETE, notifications) as it came, unbuffered. */
  private async relay(upstream: Dispatcher.ResponseData, res: Response): Promise<void> {
    if (upstream.statusCode >= 500 || upstream.statusCode === 401 || upstream.statusCode === 403) {
      await upstream.body.dump().catch(() => undefined);
      const failed = upstreamFailed(
        `The MCP server's upstream answered ${upstream.statusCode}.`,
        upstream.statusCode,
      );
      res.status(502).json(failed.toResponse(undefined));
      return;
    }
    res.status(upstream.statusCode);
    copyAnswerHeaders(upstream, res);
    res.flushHeaders();
    try {
      for await (const chunk of upstream.body) {
        if (!(await write(res, chunk as Buffer))) break;
      }
    } catch {
      // The upstream or the client went away: the stream ends here.
    }
    res.end();
  }

  /** The upstream's answer to a request the gateway governs: JSON transformed whole, a stream event by event. */
  private async answer(
    upstream: Dispatcher.ResponseData,
    exchange: Exchange,
    transform: Transform | undefined,
    res: Response,
  ): Promise<void> {
    const status = upstream.statusCode;
    const type = headerText(upstream.headers['content-type'])?.toLowerCase() ?? '';
    const session = headerText(upstream.headers['mcp-session-id']);
    if (session) exchange.sessionId = session;
    // The session the upstream began is the caller's: bound before the client can use it.
    if (session && exchange.method === 'initialize' && status < 300 && this.options.sessions) {
      const { server, principal } = exchange.admitted;
      await this.options.sessions.bind(server.id, session, sessionOwner(principal));
    }
    if (status >= 500 || status === 401 || status === 403) {
      await upstream.body.dump().catch(() => undefined);
      throw upstreamFailed(`The MCP server's upstream answered ${status}.`, status);
    }
    if (status >= 300 || (!type.startsWith('application/json') && !type.startsWith('text/event-stream'))) {
      // A refusal of the transport's own (400, 404 for a session that ended, 405): the client's to read.
      this.settle(exchange, false);
      const text = await readText(upstream.body, MAX_UPSTREAM_JSON_BYTES);
      this.finish(exchange, status, text, undefined);
      res.status(status);
      copyAnswerHeaders(upstream, res);
      res.send(text);
      return;
    }
    if (type.startsWith('application/json')) {
      const text = await readText(upstream.body, MAX_UPSTREAM_JSON_BYTES);
      let message: unknown;
      try {
        message = JSON.parse(text);
      } catch {
        throw upstreamFailed("The MCP server's upstream answered JSON that cannot be read.");
      }
      this.settle(exchange, true);
      const answered = await this.answerOf(message, exchange, transform);
      if (answered === undefined) {
        throw upstreamFailed(
          "The MCP server's upstream answered JSON that is not the answer to the request.",
        );
      }
      res.status(status);
      copyAnswerHeaders(upstream, res);
      res.json(answered);
      return;
    }
    // An event stream: events pass as they come; the one answering the request is governed.
    res.status(status);
    copyAnswerHeaders(upstream, res);
    res.flushHeaders();
    const queue: EventSourceMessage[] = [];
    const parser = createParser({ onEvent: (event) => queue.push(event) });
    let answered = false;
    try {
      for await (const chunk of upstream.body) {
        parser.feed((chunk as Buffer).toString('utf8'));
        while (queue.length > 0) {
          const event = queue.shift()!;
          let data = event.data;
          if (!answered) {
            let message: unknown;
            try {
              message = JSON.parse(event.data);
            } catch {
              message = undefined;
            }
            const governed = await this.answerOf(message, exchange, transform);
            if (governed !== undefined) {
              answered = true;
              this.settle(exchange, true);
              data = JSON.stringify(governed);
            }
          }
          if (!(await write(res, sseEvent(event, data)))) return;
        }
      }
    } catch {
      // The upstream or the client went away mid-stream.
    } finally {
      if (!answered) {
        this.settle(exchange, false);
        const failed = upstreamFailed("The MCP server's event stream ended before it answered the request.");
        this.finish(exchange, res.destroyed ? 499 : 502, undefined, failed);
      }
      if (!res.writableEnded) res.end();
    }
  }

  /**
   * The answer to the exchange's request when `message` is it (else undefined): its result
   * transformed, or the refusal of it as a JSON-RPC error; logged.
   */
  private async answerOf(
    message: unknown,
    exchange: Exchange,
    transform: Transform | undefined,
  ): Promise<Record<string, unknown> | undefined> {
    if (isJSONRPCResultResponse(message) && message.id === exchange.id) {
      let result = message.result as Record<string, unknown>;
      try {
        if (transform) result = await transform(result);
      } catch (err) {
        const refusal = this.refusalFrom(err);
        this.finish(exchange, refusal.data.status, undefined, refusal);
        return refusal.toResponse(exchange.id) as unknown as Record<string, unknown>;
      }
      const answered = { ...message, result };
      this.finish(exchange, 200, result, undefined);
      return answered;
    }
    if (isJSONRPCErrorResponse(message) && message.id === exchange.id) {
      this.finish(exchange, 200, message.error, undefined, message.error.code);
      return message as unknown as Record<string, unknown>;
    }
    return undefined;
  }

  private refusalFrom(err: unknown): McpRefusal {
    if (err instanceof McpRefusal) return err;
    if (err instanceof AppError) return refusalOf(err);
    this.options.logger.error('an MCP request failed', { error: String(err) });
    return unavailable('The MCP request failed in the gateway.', 'internal_error', 500);
  }

  /** Logs and counts the exchange once: its answer (a result, or the upstream's error) or its refusal. */
  private finish(
    exchange: Exchange,
    status: number,
    response: unknown,
    refusal: McpRefusal | undefined,
    upstreamErrorCode = 0,
  ): void {
    if (exchange.logged) return;
    exchange.logged = true;
    const { principal, server, headers } = exchange.admitted;
    const toolError =
      refusal === undefined &&
      typeof response === 'object' &&
      response !== null &&
      (response as { isError?: unknown }).isError === true;
    const errorCode = refusal?.code ?? upstreamErrorCode;
    const seconds = (performance.now() - exchange.startedAt) / 1000;
    if (exchange.span) {
      if (exchange.sessionId) exchange.span.setAttribute('mcp.session.id', exchange.sessionId);
      if (errorCode !== 0) {
        exchange.span.setAttribute('rpc.jsonrpc.error_code', errorCode);
        failSpan(exchange.span, refusal?.data.code || String(errorCode));
      }
      exchange.span.end();
    }
    this.options.metrics.mcpCall(server.slug, exchange.method, outcomeOf(errorCode, toolError), seconds);
    const body =
      refusal !== undefined
        ? JSON.stringify({ error: { code: refusal.code, message: refusal.message, data: refusal.data } })
        : response === undefined
          ? ''
          : typeof response === 'string'
            ? response
            : JSON.stringify(response);
    try {
      publishRequestEvents(
        this.options.bus,
        {
          requestId: exchange.requestId,
          w3cTraceId: exchange.w3cTraceId,
          principal,
          headers,
          method: 'POST',
          path: exchange.path,
          provider: 'mcp',
          model: exchange.toolName || exchange.method,
          integrationSlug: server.integrationSlug || undefined,
          status,
          stream: false,
          createdAtMs: exchange.createdAtMs,
          latencyMs: seconds * 1000,
          requestBody: exchange.requestBody,
          responseBody: body,
          errorMessage: refusal?.message,
          policy: exchange.policy,
          guardrails: exchange.runs,
          mcp: {
            serverId: server.id,
            serverSlug: server.slug,
            integrationSlug: server.integrationSlug,
            method: exchange.method,
            toolName: exchange.toolName,
            errorCode,
            toolError,
            sessionId: exchange.sessionId,
          },
        },
        {
          usage: undefined,
          tokens: 0,
          cost: exchange.method === 'tools/call' && status < 400 && refusal === undefined ? exchange.cost : 0,
        },
      );
    } catch (err) {
      this.options.logger.warn('an MCP request could not be logged', { error: String(err) });
    }
  }
}

/** Throws the 403 of a caller who may use nothing on the server (see McpAccess.serverRefusal). */
function refuseServer(admitted: Admitted): void {
  const why = admitted.access.serverRefusal;
  if (why !== undefined) throw forbidden(why, 'mcp_server_forbidden', 403);
}

/** The client's body as one JSON-RPC message; 400 with -32700 or -32600 otherwise. */
export function parseMessage(body: unknown): JSONRPCMessage {
  const text = Buffer.isBuffer(body) ? body.toString('utf8') : typeof body === 'string' ? body : '';
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalid(McpGatewayError.ParseError, 'The body is not JSON.');
  }
  if (Array.isArray(parsed)) {
    throw invalid(
      McpGatewayError.InvalidRequest,
      'JSON-RPC batches are not supported (MCP 2025-06-18 and later send one message per request).',
    );
  }
  const message = JSONRPCMessageSchema.safeParse(parsed);
  if (!message.success)
    throw invalid(McpGatewayError.InvalidRequest, 'The body is not a JSON-RPC 2.0 message.');
  return message.data;
}

function outcomeOf(errorCode: number, toolError: boolean): McpOutcome {
  switch (errorCode) {
    case 0:
      return toolError ? 'tool_error' : 'ok';
    case McpGatewayError.Forbidden:
      return 'forbidden';
    case McpGatewayError.RateLimited:
      return 'rate_limited';
    case McpGatewayError.GuardrailDenied:
      return 'guardrail_denied';
    case McpGatewayError.NotFound:
      return 'not_found';
    case McpGatewayError.Unavailable:
    case McpGatewayError.UpstreamFailed:
      return 'upstream_error';
    case McpGatewayError.ParseError:
    case McpGatewayError.InvalidRequest:
    case McpGatewayError.InvalidParams:
      return 'invalid';
    default:
      return 'error';
  }
}

/** The target the upstream's client-credentials token is fetched (and kept) for. */
function tokenTarget(server: mcp.McpServerRoute): ProviderTarget {
  const auth = server.auth!;
  return {
    provider: 'mcp',
    apiKey: '',
    headers: {},
    integrationSlug: server.slug,
    integrationId: `mcp:${server.id}`,
    settings: {
      provider_auth_type: 'oauthClientCredentials',
      oauth_token_endpoint: auth.tokenUrl,
      oauth_client_id: auth.clientId,
      oauth_client_secret: auth.clientSecret,
      oauth_scope: auth.scope,
    },
  };
}

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The upstream answer's headers the client reads: its type and the session. */
function copyAnswerHeaders(upstream: Dispatcher.ResponseData, res: Response): void {
  for (const name of ['content-type', 'mcp-session-id', 'cache-control']) {
    const value = headerText(upstream.headers[name] as string | string[] | undefined);
    if (value !== undefined) res.setHeader(name, value);
  }
}

/** One event as the upstream sent it, with `data` (perhaps transformed). */
function sseEvent(event: EventSourceMessage, data: string): string {
  let text = '';
  if (event.event !== undefined) text += `event: ${event.event}\n`;
  if (event.id !== undefined) text += `id: ${event.id}\n`;
  for (const line of data.split('\n')) text += `data: ${line}\n`;
  return `${text}\n`;
}

/** Writes, waiting while the client's buffer is full; false when the client went away. */
async function write(res: Response, chunk: Buffer | string): Promise<boolean> {
  if (res.destroyed) return false;
  if (res.write(chunk)) return true;
  await Promise.race([once(res, 'drain'), once(res, 'close')]);
  return !res.destroyed;
}

async function readText(body: Dispatcher.ResponseData['body'], maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) {
      body.destroy();
      throw upstreamFailed(`The MCP server's upstream answered more than ${maxBytes} bytes.`);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}
