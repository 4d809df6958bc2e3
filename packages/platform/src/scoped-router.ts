import { Router, type Request, type RequestHandler } from 'express';
import type { RouteParameters } from 'express-serve-static-core';
import { auditWrite } from './audit-trail.ts';
import { storableUrlText } from './http.ts';
import { requirePrincipal } from './auth.ts';
import { assertScope, isScope, scopePlane, type Scope } from './scopes.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * What a route needs: a scope, only an authenticated caller, or nothing at all (`public`:
 * protocol endpoints such as OAuth's, which authenticate their clients themselves).
 */
export type Access = Scope | 'authenticated' | 'public';

/** A request the route serves, with the scope it needs: how a route whose scope depends on the request is described. */
export interface ScopedExample {
  method: HttpMethod;
  path: string;
  scope: Scope;
}

/** One route as served: its method, full path (`:name` for parameters) and the scope it needs. */
export interface DeclaredRoute {
  method: HttpMethod | 'ALL';
  path: string;
  /**
   * `authenticated`: any authenticated caller (the route decides the rest itself); `public`:
   * no caller needed (mounted without authentication); null when
   * the scope depends on the request, and `examples` then says which requests need which.
   */
  scope: Access | null;
  examples: ScopedExample[];
}

/**
 * An express router on which every route names the scope it needs. The scope is checked
 * before anything else of the route runs (body parsing included), by one guard for all
 * services, and the router can list what it serves, so the route/permission matrix is
 * always complete. Authentication runs before it (see `apiKeyAuthentication`). Path and query
 * text is checked next (`storableUrlText`), then the body is read.
 */
export interface ScopedRouterOptions {
  /** Reads the body of this router's routes, after the scope check: a key without the right gets its 403 whatever it sent. */
  body?: RequestHandler;
}

export class ScopedRouter {
  readonly router: Router = Router();
  private readonly body: RequestHandler[];
  private readonly own: DeclaredRoute[] = [];
  private readonly children: Array<{ prefixes: string[]; child: ScopedRouter }> = [];

  constructor(options: ScopedRouterOptions = {}) {
    this.body = options.body ? [options.body] : [];
  }

  get<P extends string>(
    path: P,
    scope: Access,
    ...handlers: Array<RequestHandler<RouteParameters<P>>>
  ): this {
    return this.add('GET', path, scope, handlers);
  }

  post<P extends string>(
    path: P,
    scope: Access,
    ...handlers: Array<RequestHandler<RouteParameters<P>>>
  ): this {
    return this.add('POST', path, scope, handlers);
  }

  put<P extends string>(
    path: P,
    scope: Access,
    ...handlers: Array<RequestHandler<RouteParameters<P>>>
  ): this {
    return this.add('PUT', path, scope, handlers);
  }

  patch<P extends string>(
    path: P,
    scope: Access,
    ...handlers: Array<RequestHandler<RouteParameters<P>>>
  ): this {
    return this.add('PATCH', path, scope, handlers);
  }

  delete<P extends string>(
    path: P,
    scope: Access,
    ...handlers: Array<RequestHandler<RouteParameters<P>>>
  ): this {
    return this.add('DELETE', path, scope, handlers);
  }

  /**
   * Any method on paths matching `pattern`, with the scope `scopeOf` picks for each request;
   * `examples` describe it to the matrix (each is checked against `scopeOf`).
   */
  all(
    pattern: RegExp,
    scopeOf: (method: string, path: string) => Scope,
    examples: ScopedExample[],
    ...handlers: RequestHandler[]
  ): this {
    for (const example of examples) {
      const scope = scopeOf(example.method, example.path);
      if (scope !== example.scope) {
        throw new Error(
          `route ${example.method} ${example.path}: needs ${scope}, described as ${example.scope}`,
        );
      }
    }
    this.own.push({ method: 'ALL', path: pattern.source, scope: null, examples });
    const guard: RequestHandler = (req, res, next) => {
      if (req.method !== 'OPTIONS') {
        const scope = scopeOf(req.method, req.path);
        assertScope(requirePrincipal(req), scope);
        auditWrite(req, res, scope, pattern.source);
      }
      next();
    };
    this.router.all(pattern, guard, storableUrlText, ...this.body, ...handlers);
    return this;
  }

  /** Middleware for every route of this router (and the routers it mounts) that comes after it. */
  use(...handlers: RequestHandler[]): this {
    this.router.use(...handlers);
    return this;
  }

  /** Serves `child`'s routes under each of `prefixes`, after `middleware`. */
  mount(prefixes: string | string[], child: ScopedRouter, ...middleware: RequestHandler[]): this {
    const list = typeof prefixes === 'string' ? [prefixes] : prefixes;
    // The audit trail reads a route's pattern as the router's base URL and the route's path.
    const parameterised = list.find((prefix) => prefix.includes(':'));
    if (parameterised) throw new Error(`mount prefix ${parameterised}: prefixes are literal paths`);
    this.children.push({ prefixes: list, child });
    // One layer per prefix, as routes() lists them.
    for (const prefix of list) this.router.use(prefix, ...middleware, child.router);
    return this;
  }

  /** Every route served, with full paths under `prefix`. */
  routes(prefix = ''): DeclaredRoute[] {
    const routes: DeclaredRoute[] = this.own.map((route) => ({
      ...route,
      path: route.method === 'ALL' ? route.path : joinPath(prefix, route.path),
      examples: route.examples.map((e) => ({ ...e, path: joinPath(prefix, e.path) })),
    }));
    for (const { prefixes, child } of this.children) {
      for (const p of prefixes) routes.push(...child.routes(joinPath(prefix, p)));
    }
    return routes;
  }

  private add<P extends string>(
    method: HttpMethod,
    path: P,
    scope: Access,
    handlers: Array<RequestHandler<RouteParameters<P>>>,
  ): this {
    this.own.push({ method, path, scope, examples: [] });
    const guard = [
      scopeGuard(scope),
      ...auditHook(method, path, scope),
      storableUrlText,
      ...this.body,
    ] as Array<RequestHandler<RouteParameters<P>>>;
    switch (method) {
      case 'GET':
        this.router.get(path, ...guard, ...handlers);
        break;
      case 'POST':
        this.router.post(path, ...guard, ...handlers);
        break;
      case 'PUT':
        this.router.put(path, ...guard, ...handlers);
        break;
      case 'PATCH':
        this.router.patch(path, ...guard, ...handlers);
        break;
      case 'DELETE':
        this.router.delete(path, ...guard, ...handlers);
        break;
    }
    return this;
  }
}

function joinPath(prefix: string, path: string): string {
  if (path === '/' || path === '') return prefix || '/';
  return `${prefix.replace(/\/$/, '')}${path.startsWith('/') ? '' : '/'}${path}`;
}

/**
 * Records each successful management write (see `auditWrite`): on every non-GET route whose
 * scope is not a data-plane scope, after the guard has let the caller through. Reads and
 * model calls get no extra step.
 */
function auditHook(method: HttpMethod, path: string, access: Access): RequestHandler[] {
  const scope = isScope(access) ? access : null;
  if (method === 'GET' || (scope !== null && scopePlane(scope) === 'data')) return [];
  return [
    (req, res, next) => {
      auditWrite(req, res, scope, path);
      next();
    },
  ];
}

/** The route guard: a 403 in the one error shape when the caller's key lacks `scope`. */
export function scopeGuard(access: Access): RequestHandler {
  if (access === 'public') return (_req, _res, next) => next();
  return (req: Request, _res, next) => {
    const principal = requirePrincipal(req);
    if (access !== 'authenticated') assertScope(principal, access);
    next();
  };
}
