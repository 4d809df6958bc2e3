// The audit trail of one request: the sink and actor attached to it, and auditWrite, which
// ScopedRouter's route guard calls. Its own module so that scoped-router.ts need not import
// audit.ts, which reads the declared routes (serviceAuditSink); audit.ts re-exports it.

import type { Request, RequestHandler, Response } from 'express';
import type { events } from '@switchyard/proto';
import { scopePlane, type Scope } from './scopes.ts';

/**
 * One management write as the route guard saw it (who, what, when, from where; never a body):
 * an AuditEvent but for the event id and the service, which the sink adds. Absent values are ''.
 */
export type AuditEntry = Omit<events.AuditEvent, '$typeName' | '$unknown' | 'id' | 'service'>;

/** Where a service's audit entries go; must neither block nor throw. */
export type AuditSink = (entry: AuditEntry) => void;

const SINK = Symbol('switchyard.auditSink');
const ACTOR = Symbol('switchyard.auditActor');
type Audited = Request & { [SINK]?: AuditSink; [ACTOR]?: AuditActor };

/**
 * Who made a write when the caller is not an API key, token or session (no `req.principal`):
 * e.g. an identity provider with the organisation's SCIM token.
 */
export interface AuditActor {
  organisationId: string;
  /** How it authenticated, e.g. `scim_token`. */
  authMethod: string;
  /** A name for the credential, as a key's name would be. */
  name: string;
}

/** Records this request's writes as made by `actor` (for callers without a principal). */
export function attachAuditActor(req: Request, actor: AuditActor): void {
  (req as Audited)[ACTOR] = actor;
}

/** Management writes served for this request are recorded through `sink` (see `auditWrite`). */
export function attachAuditSink(req: Request, sink: AuditSink | undefined): void {
  (req as Audited)[SINK] = sink;
}

/**
 * Put in front of a service's router by the runtime: the management writes that router's
 * routes serve are recorded through `sink` (see `auditWrite`, which ScopedRouter calls).
 */
export function auditTrail(sink: AuditSink): RequestHandler {
  return (req, _res, next) => {
    attachAuditSink(req, sink);
    next();
  };
}

/** Methods that change nothing: never audited. */
export const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** A path parameter that names a resource: `id`, `slug`, or `<thing>Id` / `<thing>_id`. */
const RESOURCE_PARAM = /^(id|slug)$|Id$|_id$/;

/** The last parameter of the route that names a resource (the most specific one), or ''. */
function resourceIdOf(params: Record<string, unknown>): string {
  let found = '';
  for (const [name, value] of Object.entries(params)) {
    if (RESOURCE_PARAM.test(name) && typeof value === 'string') found = value;
  }
  return found;
}

function joinPattern(base: string, path: string): string {
  if (path === '/' || path === '') return base || '/';
  return `${base.replace(/\/$/, '')}${path.startsWith('/') ? '' : '/'}${path}`;
}

/**
 * Runs `listener` once the response's status and headers are set, before any byte of it is
 * sent (Node writes the head together with the first body bytes, and every answer, explicit or
 * implicit, passes through writeHead).
 */
function onResponseHead(res: Response, listener: () => void): void {
  const writeHead = res.writeHead;
  let called = false;
  res.writeHead = function (this: Response, ...args: unknown[]) {
    const result: unknown = Reflect.apply(writeHead, this, args);
    if (!called) {
      called = true;
      listener();
    }
    return result;
  } as Response['writeHead'];
}

/**
 * Called by the route guard once the caller may use the route: a non-GET request to a route
 * whose scope is not a data-plane scope is recorded when its answer is a 2xx, before that
 * answer is sent: a client that saw its write acknowledged can count on the entry (on the
 * in-process bus, it is in the journal by then). Model calls are
 * request logs, not audit entries; requests without an authenticated caller are not recorded.
 * `routePath` is the route's pattern within its router; mount prefixes are literal, so the
 * router's base URL completes it.
 */
export function auditWrite(req: Request, res: Response, scope: Scope | null, routePath: string): void {
  if (READS.has(req.method)) return;
  if (scope !== null && scopePlane(scope) === 'data') return;
  const sink = (req as Audited)[SINK];
  const principal = req.principal;
  const actor = (req as Audited)[ACTOR];
  if (!sink || (!principal && !actor)) return;
  // Read now: express restores the base URL and parameters once routing leaves the router.
  const route = joinPattern(req.baseUrl, routePath);
  const path = req.originalUrl.split('?', 1)[0] ?? '';
  const resourceId = resourceIdOf(req.params as Record<string, unknown>);
  const method = req.method;
  const clientIp = req.ip ?? '';
  const userAgent = req.get('user-agent') ?? '';
  onResponseHead(res, () => {
    const status = res.statusCode;
    if (status < 200 || status >= 300) return;
    const requestId = res.getHeader('x-request-id');
    sink({
      ...(principal
        ? {
            organisationId: principal.organisationId,
            workspaceId: principal.workspaceId ?? '',
            apiKeyId: principal.apiKeyId,
            userId: principal.userId ?? '',
            authMethod: principal.authMethod ?? 'api_key',
            keyName: principal.name,
          }
        : {
            organisationId: actor!.organisationId,
            workspaceId: '',
            apiKeyId: '',
            userId: '',
            authMethod: actor!.authMethod,
            keyName: actor!.name,
          }),
      method,
      route,
      path,
      scope: scope ?? '',
      status,
      resourceId,
      occurredAtMs: String(Date.now()),
      clientIp,
      userAgent: userAgent.slice(0, 512),
      requestId: typeof requestId === 'string' ? requestId : '',
    });
  });
}
