import type { Request, Response } from 'express';
import {
  labelledRoute,
  requestContext,
  requestTraceId,
  statusClass,
  type Logger,
  type Metrics,
} from '@switchyard/core';
import { REQUEST_ID_HEADER } from '@switchyard/http';
import { bearerToken, requireWorkspacePrincipal } from '@switchyard/access';
import { headerNames } from '../domain/gateway-headers.ts';
import type { GatewayRequest, IncomingCall } from '../domain/gateway-request.ts';
import { CLIENT_CLOSED_MESSAGE, CLIENT_CLOSED_STATUS } from '../events/request-events.ts';
import { readGatewayHeaders } from './gateway-headers.ts';
import { droppedByGateway } from './respond.ts';

/**
 * The route template a request is counted under, as the access metrics (packages/http) count
 * it: the router's pattern, else the template named for it (see route-templates.ts).
 */
function routeOf(req: Request, res: Response): string {
  const path = (req.route as { path?: unknown } | undefined)?.path;
  return typeof path === 'string' ? path : (labelledRoute(res) ?? 'unmatched');
}

/** What the domain needs of a data-plane request: its caller (a workspace key), the gateway headers, and what its log records. */
export function readIncomingCall(req: Request, res: Response, prefix: string): IncomingCall {
  const principal = requireWorkspacePrincipal(req);
  const headers = readGatewayHeaders(req, prefix);
  return {
    principal,
    headers,
    providerKey: providerKeyOf(req, prefix),
    requestId: String(res.getHeader(REQUEST_ID_HEADER) ?? ''),
    w3cTraceId: requestTraceId(req.headers.traceparent),
    method: req.method,
    path: req.originalUrl.split('?')[0] ?? req.path,
    route: routeOf(req, res),
    clientHeader: (name) => {
      const value = req.headers[name];
      return Array.isArray(value) ? value[0] : value;
    },
  };
}

/**
 * The provider key a request brings in `Authorization` when the gateway key travels in
 * `<prefix>api-key`. A client that sends the gateway key in both (the Portkey SDK does) brings
 * none: the gateway key never goes to a provider.
 */
function providerKeyOf(req: Request, prefix: string): string | undefined {
  const gatewayKey = req.headers[headerNames(prefix)['api-key']];
  if (!gatewayKey) return undefined;
  const bearer = bearerToken(req.headers.authorization);
  const presented = Array.isArray(gatewayKey) ? gatewayKey[0] : gatewayKey;
  return bearer === presented?.trim() ? undefined : bearer;
}

/** Where requests whose client went away before the answer was sent are reported. */
export interface ClosedRequestReport {
  logger: Pick<Logger, 'info'>;
  /** The process's metrics: the access metrics count only answers that were sent in full. */
  metrics?: Metrics | undefined;
}

/**
 * Ties a request to its connection: its log lines carry its trace id, and a client that
 * goes away before the answer is sent cancels the request, upstream call included. Such a
 * request is no server error: it is logged at info and counted under status 499, and its log
 * records 499 "client closed request" (see GatewayRequest.clientClosed). A connection the
 * gateway drops itself (see dropConnection) is not the client's leaving.
 */
export function attachToConnection(
  request: GatewayRequest,
  req: Request,
  res: Response,
  report: ClosedRequestReport,
): void {
  const store = requestContext.getStore();
  if (store) store.traceId = request.headers.traceId;
  res.once('close', () => {
    if (res.writableFinished) return;
    if (droppedByGateway(res)) {
      request.abort.abort();
      return;
    }
    if (!request.clientClosed()) return;
    report.logger.info(CLIENT_CLOSED_MESSAGE, {
      request_id: res.getHeader(REQUEST_ID_HEADER),
      trace_id: request.headers.traceId,
      method: req.method,
      path: req.baseUrl + req.path,
      status: CLIENT_CLOSED_STATUS,
    });
    // Labelled as the access metrics label a request (packages/http), which never see this one.
    report.metrics?.httpRequests.inc({
      service: 'gateway',
      method: req.method,
      route: routeOf(req, res),
      status: String(CLIENT_CLOSED_STATUS),
      status_class: statusClass(CLIENT_CLOSED_STATUS),
    });
  });
}
