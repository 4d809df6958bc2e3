import type { Request, Response } from 'express';
import { requestContext } from '@switchyard/core';
import { REQUEST_ID_HEADER } from '@switchyard/http';
import { bearerToken, requireWorkspacePrincipal } from '@switchyard/access';
import { headerNames } from '../domain/gateway-headers.ts';
import type { GatewayRequest, IncomingCall } from '../domain/gateway-request.ts';
import { readGatewayHeaders } from './gateway-headers.ts';

/** What the domain needs of a data-plane request: its caller (a workspace key), the gateway headers, and what its log records. */
export function readIncomingCall(req: Request, res: Response, prefix: string): IncomingCall {
  const principal = requireWorkspacePrincipal(req);
  const headers = readGatewayHeaders(req, prefix);
  return {
    principal,
    headers,
    providerKey: req.headers[headerNames(prefix)['api-key']]
      ? bearerToken(req.headers.authorization)
      : undefined,
    requestId: String(res.getHeader(REQUEST_ID_HEADER) ?? ''),
    method: req.method,
    path: req.originalUrl.split('?')[0] ?? req.path,
    clientHeader: (name) => {
      const value = req.headers[name];
      return Array.isArray(value) ? value[0] : value;
    },
  };
}

/**
 * Ties a request to its connection: its log lines carry its trace id, and a client that
 * goes away before the answer is sent cancels the request, upstream call included.
 */
export function attachToConnection(request: GatewayRequest, res: Response): void {
  const store = requestContext.getStore();
  if (store) store.traceId = request.headers.traceId;
  res.once('close', () => {
    if (!res.writableFinished) request.abort.abort();
  });
}
