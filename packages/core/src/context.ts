import { AsyncLocalStorage } from 'node:async_hooks';

/** Per-request values that every log line written while serving the request carries. */
export interface RequestContext {
  requestId: string;
  traceId?: string;
}

export const requestContext = new AsyncLocalStorage<RequestContext>();
