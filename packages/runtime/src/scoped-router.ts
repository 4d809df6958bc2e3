import { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { RouteParameters } from 'express-serve-static-core';
import type { z } from 'zod';
import {
  assertScope,
  auditWrite,
  isScope,
  requirePrincipal,
  type Scope,
  scopePlane,
} from '@switchyard/access';
import { storableUrlText } from '@switchyard/http';
import { type PageQuery, parseInput, parsePage } from '@switchyard/core';

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

/**
 * A body that is not one JSON document validated as a whole: the media types the route takes,
 * in its own terms (OAuth's form-encoded parameters, SCIM's JSON, an upload the gateway
 * streams through), with the schema that validates it where there is one.
 */
export interface BodyContent {
  /** The media types the route reads, the one clients usually send first. */
  contentTypes: readonly [string, ...string[]];
  /** The schema the route validates the body with, when it has one. */
  schema?: z.ZodType | undefined;
  /** An absent body is read as `{}`: the route takes no body at all too. */
  optional?: boolean | undefined;
  /** What the route reads and does with it, when the schema does not say. */
  description?: string | undefined;
}

/** A route's body: a schema for one JSON document, its own terms, or `none` (it reads no body). */
export type BodyDeclaration = z.ZodType | BodyContent | 'none';
/** A route's query: the schema of the parameters it reads, or `none` (it reads none). */
export type QueryDeclaration = z.ZodType | 'none';

/** An error shape other than the one error shape: a protocol's own (OAuth's, SCIM's). */
export interface ErrorShape {
  /** Its name among the document's components. */
  name: string;
  contentType: string;
  schema: z.ZodType;
}

/** What a route says of itself besides its input: for its description (see openapi.ts). */
export interface RouteDocumentation {
  /** One line: what the route does. */
  summary?: string | undefined;
  /** More, when one line is not enough. */
  description?: string | undefined;
  /** The status of a successful answer (200 unless said). */
  status?: number | undefined;
  /** The schema of a successful answer, when there is one; otherwise any JSON is described. */
  response?: z.ZodType | undefined;
  /** The media type of a successful answer, when not `application/json`. */
  responseType?: string | undefined;
  /** Answers a stream of server-sent events instead when the request asks for one (`stream: true`). */
  streams?: boolean | undefined;
  /**
   * A route declared `public` that checks a credential of its own: the organisation's SCIM
   * token, or an OAuth client's (Basic or in the body).
   */
  credential?: 'scim_token' | 'oauth_client' | undefined;
  /** How refusals look when not in the one error shape. */
  errors?: ErrorShape | undefined;
}

/** What a route reads from its request: a decision for each part, and how to document it. */
export interface InputDeclaration {
  query: QueryDeclaration;
  /** The page parameters `current_page` and `page_size`, read by `parsePage`. */
  page?: boolean | undefined;
  /** Path parameters the route validates, keyed by their documented names (see `paramNames`). */
  params?: z.ZodObject | undefined;
  /** Path parameters documented under another name than the path's: `{ sub: 'sub-type' }`. */
  paramNames?: Readonly<Record<string, string>> | undefined;
}

/** A GET route: its scope, what it reads (no body) and how it is described. */
export interface ReadRouteSpec extends InputDeclaration, RouteDocumentation {
  scope: Access;
}

/** A route of any other method: also its body, or `none`. */
export interface WriteRouteSpec extends ReadRouteSpec {
  body: BodyDeclaration;
}

/** The declaration a route was made with: what it reads, answers and is described as. */
export interface DeclaredInput extends InputDeclaration, RouteDocumentation {
  body: BodyDeclaration;
}

/** One request a pattern route serves, described as a route is (see `ScopedRouter.all`). */
export interface PatternOperation extends InputDeclaration, RouteDocumentation {
  method: HttpMethod;
  /** The full path, `:name` for parameters. */
  path: string;
  /** For operations of other methods than GET. */
  body?: BodyDeclaration | undefined;
  /** Forwarded to a provider as it came (the gateway's `/v1/*`). */
  forwarded?: boolean | undefined;
}

/** A pattern route's operations as served, each with the scope it needs. */
export interface DeclaredOperation extends PatternOperation {
  scope: Scope;
  input: DeclaredInput;
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
  /**
   * What the route reads (body, query, path) and answers, as declared; absent when it was
   * declared with a bare scope, which decides nothing (its description then cannot be made).
   */
  input?: DeclaredInput | undefined;
  /** A pattern route's operations, one by one (`ALL` routes only). */
  operations?: DeclaredOperation[] | undefined;
}

/** How a pattern route (`all`) is described: requests for the matrix, operations for the reference. */
export interface PatternDescription {
  examples: ScopedExample[];
  operations: PatternOperation[];
}

type Output<S> = S extends z.ZodType ? z.output<S> : never;
type BodySchema<B> = B extends z.ZodType ? B : B extends { schema: infer C extends z.ZodType } ? C : never;

/**
 * The parsers of a declared route, handed to its handler: each parses with exactly the schema
 * the route declares (so that what is declared is what is validated), when the handler calls
 * it, in the handler's order, with `parseInput`'s errors. Undefined for a part declared `none`.
 */
export interface RouteInput<S extends ReadRouteSpec> {
  /** The query, as `parseInput(query, req.query, 'query')`. */
  query: S['query'] extends z.ZodType ? (req: Request) => Output<S['query']> : undefined;
  /** The body (`req.body` unless given; `{}` for an absent optional body), as `parseInput(body, value)`. */
  body: S extends { body: infer B }
    ? [BodySchema<B>] extends [never]
      ? undefined
      : (req: Request, value?: unknown) => Output<BodySchema<B>>
    : undefined;
  /** All declared path parameters as one object, named as documented, as `parseInput(params, value, 'path')`. */
  params: S['params'] extends z.ZodObject
    ? (req: Request, value?: unknown) => Output<S['params']>
    : undefined;
  /** One path parameter alone, as `parseInput(params.shape[name], req.params[name], 'path', root)`. */
  param: S['params'] extends z.ZodObject
    ? <K extends keyof S['params']['shape'] & string>(
        req: Request,
        name: K,
        root?: string,
      ) => Output<S['params']['shape'][K]>
    : undefined;
  /** The page parameters, as `parsePage(req.query)`. */
  page: S['page'] extends true ? (req: Request) => PageQuery : undefined;
}

/** The last handler of a declared route: an express handler that is also given the route's parsers. */
export type DeclaredHandler<P extends string, S extends ReadRouteSpec> = (
  req: Request<RouteParameters<P>>,
  res: Response,
  next: NextFunction,
  input: RouteInput<S>,
) => unknown;

/** The handlers of a declared route: middleware, then the handler given its parsers. */
type DeclaredHandlers<P extends string, S extends ReadRouteSpec> = [
  ...Array<RequestHandler<RouteParameters<P>>>,
  DeclaredHandler<P, S>,
];
type BareHandlers<P extends string> = Array<RequestHandler<RouteParameters<P>>>;

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

  /** A route declared with a bare scope decides nothing of its input: it cannot be described. */
  get<P extends string>(path: P, scope: Access, ...handlers: BareHandlers<P>): this;
  get<P extends string, const S extends ReadRouteSpec>(
    path: P,
    spec: S,
    ...handlers: DeclaredHandlers<P, S>
  ): this;
  get(path: string, spec: Access | ReadRouteSpec, ...handlers: unknown[]): this {
    return this.add('GET', path, spec, handlers as RequestHandler[]);
  }

  /** A route declared with a bare scope decides nothing of its input: it cannot be described. */
  post<P extends string>(path: P, scope: Access, ...handlers: BareHandlers<P>): this;
  post<P extends string, const S extends WriteRouteSpec>(
    path: P,
    spec: S,
    ...handlers: DeclaredHandlers<P, S>
  ): this;
  post(path: string, spec: Access | WriteRouteSpec, ...handlers: unknown[]): this {
    return this.add('POST', path, spec, handlers as RequestHandler[]);
  }

  /** A route declared with a bare scope decides nothing of its input: it cannot be described. */
  put<P extends string>(path: P, scope: Access, ...handlers: BareHandlers<P>): this;
  put<P extends string, const S extends WriteRouteSpec>(
    path: P,
    spec: S,
    ...handlers: DeclaredHandlers<P, S>
  ): this;
  put(path: string, spec: Access | WriteRouteSpec, ...handlers: unknown[]): this {
    return this.add('PUT', path, spec, handlers as RequestHandler[]);
  }

  /** A route declared with a bare scope decides nothing of its input: it cannot be described. */
  patch<P extends string>(path: P, scope: Access, ...handlers: BareHandlers<P>): this;
  patch<P extends string, const S extends WriteRouteSpec>(
    path: P,
    spec: S,
    ...handlers: DeclaredHandlers<P, S>
  ): this;
  patch(path: string, spec: Access | WriteRouteSpec, ...handlers: unknown[]): this {
    return this.add('PATCH', path, spec, handlers as RequestHandler[]);
  }

  /** A route declared with a bare scope decides nothing of its input: it cannot be described. */
  delete<P extends string>(path: P, scope: Access, ...handlers: BareHandlers<P>): this;
  delete<P extends string, const S extends WriteRouteSpec>(
    path: P,
    spec: S,
    ...handlers: DeclaredHandlers<P, S>
  ): this;
  delete(path: string, spec: Access | WriteRouteSpec, ...handlers: unknown[]): this {
    return this.add('DELETE', path, spec, handlers as RequestHandler[]);
  }

  /**
   * Any method on paths matching `pattern`, with the scope `scopeOf` picks for each request;
   * `examples` describe it to the matrix (each is checked against `scopeOf`), and `operations`,
   * when given, to the reference, each needing the scope `scopeOf` gives its path.
   */
  all(
    pattern: RegExp,
    scopeOf: (method: string, path: string) => Scope,
    description: ScopedExample[] | PatternDescription,
    ...handlers: RequestHandler[]
  ): this {
    const { examples, operations } = Array.isArray(description)
      ? { examples: description, operations: undefined }
      : description;
    for (const example of examples) {
      const scope = scopeOf(example.method, example.path);
      if (scope !== example.scope) {
        throw new Error(
          `route ${example.method} ${example.path}: needs ${scope}, described as ${example.scope}`,
        );
      }
    }
    const declared = operations?.map((operation): DeclaredOperation => {
      if (!pattern.test(operation.path)) {
        throw new Error(`route ${operation.method} ${operation.path}: not served by ${pattern.source}`);
      }
      const input: DeclaredInput = { ...operation, body: operation.body ?? 'none' };
      checkParams(operation.method, operation.path, input);
      return { ...operation, scope: scopeOf(operation.method, operation.path), input };
    });
    this.own.push({ method: 'ALL', path: pattern.source, scope: null, examples, operations: declared });
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
      ...(route.operations
        ? { operations: route.operations.map((o) => ({ ...o, path: joinPath(prefix, o.path) })) }
        : {}),
    }));
    for (const { prefixes, child } of this.children) {
      for (const p of prefixes) routes.push(...child.routes(joinPath(prefix, p)));
    }
    return routes;
  }

  private add(
    method: HttpMethod,
    path: string,
    spec: Access | ReadRouteSpec,
    handlers: RequestHandler[],
  ): this {
    const scope = typeof spec === 'string' ? spec : spec.scope;
    if (typeof spec === 'string') {
      this.own.push({ method, path, scope, examples: [] });
    } else {
      const input: DeclaredInput = { ...spec, body: 'body' in spec ? (spec as WriteRouteSpec).body : 'none' };
      delete (input as { scope?: unknown }).scope;
      checkParams(method, path, input);
      this.own.push({ method, path, scope, examples: [], input });
      // The last handler is given the route's parsers; the wrapper keeps express's three arguments.
      const parsers = routeInput(path, input);
      const last = handlers.pop() as unknown as DeclaredHandler<string, ReadRouteSpec>;
      handlers.push((req, res, next) => last(req, res, next, parsers));
    }
    const guard = [scopeGuard(scope), ...auditHook(method, path, scope), storableUrlText, ...this.body];
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

/** The `:name` parameters of an express path, in order. */
export function pathParameters(path: string): string[] {
  return [...path.matchAll(/:(\w+)/g)].map((match) => match[1]!);
}

/** Declared path parameters are parameters of the path, under their documented names. */
function checkParams(method: string, path: string, input: InputDeclaration): void {
  const names = pathParameters(path);
  for (const name of Object.keys(input.paramNames ?? {})) {
    if (!names.includes(name)) throw new Error(`route ${method} ${path}: renames :${name}, not in its path`);
  }
  const documented = names.map((name) => input.paramNames?.[name] ?? name);
  for (const name of Object.keys(input.params?.shape ?? {})) {
    if (!documented.includes(name)) {
      throw new Error(`route ${method} ${path}: declares the path parameter '${name}', not in its path`);
    }
  }
}

/** The parsers a declared route's handler is given (see RouteInput), made once per route. */
function routeInput(path: string, input: DeclaredInput): RouteInput<WriteRouteSpec> {
  const { query, body, params, paramNames } = input;
  const bodySchema = body === 'none' ? undefined : 'contentTypes' in body ? body.schema : (body as z.ZodType);
  const optional = typeof body === 'object' && 'contentTypes' in body && body.optional === true;
  const expressName = new Map(pathParameters(path).map((name) => [paramNames?.[name] ?? name, name]));
  const pathValues = (req: Request) =>
    Object.fromEntries([...expressName].map(([documented, name]) => [documented, req.params[name]]));
  return {
    query: query === 'none' ? undefined : (req: Request) => parseInput(query, req.query, 'query'),
    body: bodySchema
      ? (req: Request, value: unknown = optional ? (req.body ?? {}) : req.body) =>
          parseInput(bodySchema, value)
      : undefined,
    params: params
      ? (req: Request, value: unknown = pathValues(req)) => parseInput(params, value, 'path')
      : undefined,
    param: params
      ? (req: Request, name: string, root?: string) =>
          parseInput(params.shape[name]!, req.params[expressName.get(name) ?? name], 'path', root)
      : undefined,
    page: input.page ? (req: Request) => parsePage(req.query) : undefined,
  } as unknown as RouteInput<WriteRouteSpec>;
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
