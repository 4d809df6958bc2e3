import type { Request, Response } from 'express';
import { BadRequest, Conflict, NotFound, parseInput, type Logger, type Metrics } from '@switchyard/core';
import type { batches as batchProto } from '@switchyard/proto';
import type { ForwardedAnswer, ForwardedOperations } from '../domain/forwarded-operations.ts';
import { batchFieldsOf, batchOperationOf, type GatewayBatches } from '../domain/batches.ts';
import type { GatewayRequest, IncomingCall } from '../domain/gateway-request.ts';
import { headerNames } from '../domain/gateway-headers.ts';
import { forwardedId, specified, upstreamPath } from './forwarded-routes.ts';
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
    /** The records of batches created through the gateway; without them batches are only forwarded. */
    private readonly batches?: GatewayBatches | undefined,
  ) {
    this.closed = { logger, metrics };
    this.logger = logger;
  }

  private readonly logger: Logger;

  async handle(req: Request, res: Response): Promise<void> {
    let call = readIncomingCall(req, res, this.headerPrefix);
    const batch = this.batches
      ? batchOperationOf(req.method, req.originalUrl.split('?')[0]!.replace(/^\/v1/, ''))
      : undefined;
    if (batch?.kind === 'output') return this.batchOutput(req, res, call, batch.id);
    if (batch?.kind === 'read' || batch?.kind === 'cancel')
      call = await this.recordedProvider(call, batch.id);
    const request = this.forwarded.open(call);
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
      const relayed = await this.relayAnswer(res, request, response);
      this.forwarded.complete(request, response, res.statusCode, relayed.copy, requestBody);
      if (batch) {
        this.batches?.observe(
          request,
          batch,
          res.statusCode,
          response.headers['content-type'] ?? '',
          relayed,
        );
      }
    } catch (err) {
      if (!res.headersSent) {
        setHeaders(res, request.responseHeaders);
        setHeaders(res, providerHeaders(upstreamHeadersOf(err), this.headerPrefix, request.responseHeaders));
      }
      request.fail(err, requestBody);
    }
  }

  /** The provider's answer, relayed as it arrives with the headers the request decided. */
  private relayAnswer(res: Response, request: GatewayRequest, response: ForwardedAnswer) {
    setHeaders(res, request.responseHeaders);
    setHeaders(res, providerHeaders(response.upstreamHeaders, this.headerPrefix, request.responseHeaders));
    res.status(response.status);
    for (const [name, value] of Object.entries(response.headers)) res.setHeader(name, value);
    const streamed = /text\/event-stream/i.test(response.headers['content-type'] ?? '');
    return relay(
      res,
      response.body,
      () => dropConnection(res),
      streamed ? () => request.firstChunkSent() : undefined,
    );
  }

  /**
   * A read or cancel of a batch that selects no provider (no provider, virtual key or config
   * header, no default config) goes where the batch's record says it went. Without a record,
   * or when records cannot be read, the request is routed as it came.
   */
  private async recordedProvider(call: IncomingCall, id: string): Promise<IncomingCall> {
    const { headers, principal } = call;
    if (headers.provider !== undefined || headers.config !== undefined || principal.defaults?.config)
      return call;
    if (!forwardedId.safeParse(id).success) return call;
    try {
      const record = await this.batches!.store.find(principal.organisationId, principal.workspaceId, id);
      return record ? (withProvider(call, record) ?? call) : call;
    } catch {
      return call;
    }
  }

  /**
   * GET /v1/batches/:batch_id/output: the results of a batch created through the gateway, from
   * the provider its record names (the client need not name it): the file
   * `internal_output_file_id` when set, else the provider's output file. A record without an
   * output file yet asks the provider for the batch first (and records what it says); a batch
   * not completed is a 409 naming its status. The file streams through as it arrives.
   */
  private async batchOutput(req: Request, res: Response, call: IncomingCall, id: string): Promise<void> {
    if (!forwardedId.safeParse(id).success) {
      throw new BadRequest("Invalid path parameter 'batch_id'.", { param: 'batch_id' });
    }
    const { principal } = call;
    const record = await this.batches!.store.find(principal.organisationId, principal.workspaceId, id);
    const routed = record ? withProvider(call, record) : undefined;
    if (!record || !routed) {
      throw new NotFound(`No batch '${id}' was created through the gateway in this workspace.`, {
        param: 'batch_id',
        code: 'batch_not_found',
      });
    }
    let fileId = record.internalOutputFileId || record.outputFileId;
    if (!fileId) {
      const lookup = this.forwarded.open({ ...routed, path: `/v1/batches/${id}` });
      let answer: ForwardedAnswer;
      try {
        answer = await this.forwarded.forward(lookup, {
          method: 'GET',
          pathname: `/batches/${encodeURIComponent(id)}`,
          search: '',
          headers: { accept: 'application/json' },
          json: undefined,
          parsed: undefined,
          noBody: true,
          upload: req,
        });
      } catch (err) {
        lookup.fail(err, '');
        return;
      }
      if (answer.status >= 300) {
        // The provider's refusal (its batch gone, its key revoked) is the client's answer.
        attachToConnection(lookup, req, res, this.closed);
        const relayed = await this.relayAnswer(res, lookup, answer);
        this.forwarded.complete(lookup, answer, res.statusCode, relayed.copy, '');
        return;
      }
      const body = await readBounded(answer.body, 64 * 1024);
      lookup.finish(answer.status, '', body ? body.toString('utf8') : '[batch answer too large]');
      const fields = body ? batchFieldsOf(body, id) : undefined;
      if (fields) {
        void this.batches!.record(lookup, fields).catch((err: unknown) =>
          this.logger.warn('batch record not written', { error: String(err) }),
        );
      }
      const status = fields?.status || 'unknown';
      if (status !== 'completed') {
        throw new Conflict(`Batch '${id}' is ${status}; its output can be fetched once it is completed.`, {
          param: 'batch_id',
          code: 'batch_not_completed',
        });
      }
      fileId = fields?.outputFileId ?? '';
      if (!fileId) {
        throw new NotFound(
          `Batch '${id}' completed without an output file${fields?.errorFileId ? `; its errors are in file '${fields.errorFileId}'` : ''}.`,
          { param: 'batch_id', code: 'batch_output_not_found' },
        );
      }
    }
    const request = this.forwarded.open(routed);
    attachToConnection(request, req, res, this.closed);
    try {
      const response = await this.forwarded.forward(request, {
        method: 'GET',
        pathname: `/files/${encodeURIComponent(fileId)}/content`,
        search: '',
        headers: {},
        json: undefined,
        parsed: undefined,
        noBody: true,
        upload: req,
      });
      const relayed = await this.relayAnswer(res, request, response);
      this.forwarded.complete(request, response, res.statusCode, relayed.copy, '');
    } catch (err) {
      if (!res.headersSent) {
        setHeaders(res, request.responseHeaders);
        setHeaders(res, providerHeaders(upstreamHeadersOf(err), this.headerPrefix, request.responseHeaders));
      }
      request.fail(err, '');
    }
  }
}

/** The call routed to the provider a batch record names (its integration, else its provider family); no config applies. */
function withProvider(call: IncomingCall, record: batchProto.BatchRecord): IncomingCall | undefined {
  const provider = record.integrationSlug ? `@${record.integrationSlug}` : record.provider;
  if (!provider) return undefined;
  return { ...call, headers: { ...call.headers, provider, config: undefined } };
}

/** A small answer read whole; undefined when it is larger than `limit` bytes. */
async function readBounded(body: AsyncIterable<Uint8Array>, limit: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > limit) return undefined;
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}

/** `<prefix>models-endpoint: true|false`. */
function booleanHeader(req: Request, name: string): boolean | undefined {
  const value = req.headers[name];
  if (value === undefined || value === '') return undefined;
  if (value === 'true' || value === 'false') return value === 'true';
  throw new BadRequest(`Header ${name} must be true or false.`, { param: name });
}
