import type { Request, Response } from 'express';
import { BadRequest, parseInput, type Logger, type Metrics } from '@switchyard/core';
import type { ForwardedOperations } from '../domain/forwarded-operations.ts';
import { headerNames } from '../domain/gateway-headers.ts';
import { specified, upstreamPath } from './forwarded-routes.ts';
import { attachToConnection, readIncomingCall, type ClosedRequestReport } from './incoming-call.ts';
import { upstreamHeadersOf } from '../upstream/http-client.ts';
import { parseJsonObject } from './request-body.ts';
import { providerHeaders } from './provider-headers.ts';
import { dropConnection, relay, setHeaders } from './respond.ts';

const FORWARDED_REQUEST_HEADERS = ['content-type', 'accept', 'openai-beta'];

/**
 * Every other `/v1` operation over HTTP: checks the path (and what the interface specifies
 * of it), answers GET /v1/models from the catalog where it applies, and otherwise relays the
 * provider's answer as it arrives.
 */
export class ForwardedOperationsRoute {
  /** Where a request whose client went away is reported. */
  private readonly closed: ClosedRequestReport;

  constructor(
    private readonly forwarded: ForwardedOperations,
    private readonly headerPrefix: string,
    logger: Logger,
    metrics?: Metrics | undefined,
  ) {
    this.closed = { logger, metrics };
  }

  async handle(req: Request, res: Response): Promise<void> {
    const request = this.forwarded.open(readIncomingCall(req, res, this.headerPrefix));
    attachToConnection(request, req, res, this.closed);
    const json = Buffer.isBuffer(req.body) ? (req.body as Buffer) : undefined;
    const requestBody = json ? json.toString('utf8') : '';
    try {
      const path = upstreamPath(req);
      if (req.method === 'GET' && path.pathname === '/models') {
        const wanted = booleanHeader(req, headerNames(this.headerPrefix)['models-endpoint']);
        const integrated = await this.forwarded.integratedModels(request, wanted);
        if (integrated) {
          const answer = JSON.stringify(integrated);
          setHeaders(res, request.responseHeaders);
          res.type('application/json').send(answer);
          request.finish(200, requestBody, answer);
          return;
        }
      }
      let parsed = json && json.length > 0 ? parseJsonObject(json, requestBody) : undefined;
      const rule = specified.find((r) => r.method === req.method && r.pattern.test(path.pathname));
      if (rule) {
        const values = rule.pattern.exec(path.pathname)!.slice(1);
        rule.params.forEach(({ name, schema }, i) => {
          if (!schema.safeParse(decodeURIComponent(values[i]!)).success) {
            throw new BadRequest(`Invalid path parameter '${name}'.`, { param: name });
          }
        });
        if (rule.body) parsed = parseInput(rule.body, parsed ?? {}) as Record<string, unknown>;
      }
      const headers: Record<string, string> = {};
      for (const name of FORWARDED_REQUEST_HEADERS) {
        const value = req.headers[name];
        if (typeof value === 'string') headers[name] = value;
      }
      const response = await this.forwarded.forward(request, {
        method: req.method,
        pathname: path.pathname,
        search: path.search,
        headers,
        json,
        parsed,
        noBody: rule?.noBody ?? false,
        upload: req,
      });
      setHeaders(res, request.responseHeaders);
      setHeaders(res, providerHeaders(response.upstreamHeaders, this.headerPrefix, request.responseHeaders));
      res.status(response.status);
      for (const [name, value] of Object.entries(response.headers)) res.setHeader(name, value);
      const streamed = /text\/event-stream/i.test(response.headers['content-type'] ?? '');
      const { copy } = await relay(
        res,
        response.body,
        () => dropConnection(res),
        streamed ? () => request.firstChunkSent() : undefined,
      );
      this.forwarded.complete(request, response, res.statusCode, copy, requestBody);
    } catch (err) {
      if (!res.headersSent) {
        setHeaders(res, request.responseHeaders);
        setHeaders(res, providerHeaders(upstreamHeadersOf(err), this.headerPrefix, request.responseHeaders));
      }
      request.fail(err, requestBody);
    }
  }
}

/** `<prefix>models-endpoint: true|false`. */
function booleanHeader(req: Request, name: string): boolean | undefined {
  const value = req.headers[name];
  if (value === undefined || value === '') return undefined;
  if (value === 'true' || value === 'false') return value === 'true';
  throw new BadRequest(`Header ${name} must be true or false.`, { param: name });
}
