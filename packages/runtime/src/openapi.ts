// The OpenAPI 3.0 description of the HTTP interface, generated from the routes the services
// declare (ScopedRouter): their methods, paths and scopes, and the zod schemas they validate
// their input with, converted by zod's own z.toJSONSchema (target openapi-3.0).
import type { RequestHandler } from 'express';
import { z } from 'zod';
import runtimePackage from '../package.json' with { type: 'json' };
import { type ErrorBody, pageQuery } from '@switchyard/core';
import { serviceForPath, type ServiceName } from './routes.ts';
import {
  pathParameters,
  type Access,
  type BodyDeclaration,
  type DeclaredInput,
  type DeclaredRoute,
  type ErrorShape,
  type HttpMethod,
  type ScopedRouter,
} from './scoped-router.ts';
import { scopesForKind } from '@switchyard/access';

/** The OpenAPI version the documents follow (the interface is described in OpenAPI 3.0). */
export const OPENAPI_VERSION = '3.0.3';

/** A JSON Schema (OpenAPI 3.0 Schema Object), as z.toJSONSchema gives it. */
export type JsonSchema = Record<string, unknown>;

export interface OpenApiParameter {
  name: string;
  in: 'path' | 'query';
  required: boolean;
  description?: string;
  schema: JsonSchema;
}

export interface OpenApiMediaType {
  schema: JsonSchema;
}

export interface OpenApiRequestBody {
  description?: string;
  required: boolean;
  content: Record<string, OpenApiMediaType>;
}

export interface OpenApiResponse {
  description: string;
  headers?: Record<string, { description: string; schema: JsonSchema }>;
  content?: Record<string, OpenApiMediaType>;
}

export type OpenApiReference = { $ref: string };

export interface OpenApiOperation {
  operationId: string;
  summary?: string;
  description?: string;
  tags: string[];
  /** The scope the caller's key must hold, or `public` / `authenticated` (see ScopedRouter's Access). */
  'x-required-scope': Access;
  /** Forwarded to the provider as it came (the gateway's `/v1/*`), matched by this pattern. */
  'x-forwarded-to-provider'?: { pattern: string };
  security: Array<Record<string, string[]>>;
  parameters?: OpenApiParameter[];
  requestBody?: OpenApiRequestBody;
  responses: Record<string, OpenApiResponse | OpenApiReference>;
}

export type OpenApiMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';
export type OpenApiPathItem = Partial<Record<OpenApiMethod, OpenApiOperation>>;

export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description: string };
  tags: Array<{ name: string; description: string }>;
  paths: Record<string, OpenApiPathItem>;
  components: {
    schemas: Record<string, JsonSchema>;
    responses: Record<string, OpenApiResponse>;
    securitySchemes: Record<string, Record<string, unknown>>;
  };
}

/** The routes one service declares (its ServiceInstance's `routes`). */
export interface ServiceRoutes {
  service: ServiceName;
  routes: readonly DeclaredRoute[];
}

/** The routes cannot be described: each problem names its route. */
export class OpenApiError extends Error {
  override name = 'OpenApiError';
}

/** What each service is, as its tag describes it. */
export const SERVICE_DESCRIPTIONS: Record<ServiceName, string> = {
  gateway:
    'Model calls: chat completions, and the rest of the OpenAI API surface forwarded to the providers.',
  'control-plane':
    'Workspaces, API keys, saved configs, users and workspace members, browser sessions and the OAuth 2.1 authorization server.',
  admin:
    'Provider integrations, organisation settings, SSO connections and the SSO login, email domains and SCIM provisioning.',
  'log-export': 'Request logs and the audit log.',
  policy: 'Usage policies; served over gRPC only, so no HTTP route.',
};

/** The one error shape every service answers refusals and faults in (ErrorBody). */
export const errorBodySchema = z
  .object({
    error: z.object({
      message: z.string().meta({ description: 'What went wrong, for a person.' }),
      type: z.string().meta({ description: 'The kind of error, e.g. `invalid_request_error`.' }),
      param: z.string().nullable().meta({ description: 'The parameter at fault, when one is.' }),
      code: z.string().nullable().meta({ description: 'A stable code, e.g. `missing_scope`.' }),
    }),
  })
  .meta({ description: 'The one error shape.' });

// The schema and the type it documents must agree.
const errorBodyAgrees: [z.output<typeof errorBodySchema>, ErrorBody] extends [
  ErrorBody,
  z.output<typeof errorBodySchema>,
]
  ? true
  : never = true;
void errorBodyAgrees;

const SECURITY_SCHEMES: OpenApiDocument['components']['securitySchemes'] = {
  apiKey: {
    type: 'http',
    scheme: 'bearer',
    description: 'An API key (or an OAuth access token) as `Authorization: Bearer <key>`.',
  },
  vendorApiKey: {
    type: 'apiKey',
    in: 'header',
    name: 'x-vendor-api-key',
    description:
      'An API key in the `<HEADER_PREFIX>api-key` header (`x-vendor-` unless HEADER_PREFIX says otherwise); it comes before `Authorization`.',
  },
  jwt: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description:
      'A JWT of a trusted identity provider, when the deployment names one (the `JWT_*` settings).',
  },
  oauth: {
    type: 'oauth2',
    description: "An access token of Switchyard's own OAuth 2.1 authorization server (`/oauth/*`).",
    flows: {
      authorizationCode: {
        authorizationUrl: '/oauth/authorize',
        tokenUrl: '/oauth/token',
        refreshUrl: '/oauth/token',
        scopes: Object.fromEntries(scopesForKind('workspace_user').map((scope) => [scope, scope])),
      },
    },
  },
  session: {
    type: 'apiKey',
    in: 'cookie',
    name: 'sy_session',
    description:
      'The browser session `POST /v1/auth/sessions` or the SSO login opens; writes only from a page of the same origin.',
  },
  scimToken: {
    type: 'http',
    scheme: 'bearer',
    description: "The organisation's SCIM token (also accepted as the password of Basic authentication).",
  },
  oauthClient: {
    type: 'http',
    scheme: 'basic',
    description:
      "An OAuth client's credentials (RFC 6749 §2.3.1); a client may send client_secret in the body instead, a public client only its client_id.",
  },
};

const OAUTH_SCOPES = new Set<string>(scopesForKind('workspace_user'));

/** Who may call a route, as an OpenAPI security requirement. */
function securityOf(
  access: Access,
  credential: DeclaredInput['credential'],
): Array<Record<string, string[]>> {
  if (credential === 'scim_token') return [{ scimToken: [] }];
  if (credential === 'oauth_client') return [{ oauthClient: [] }, {}];
  if (access === 'public') return [];
  const scopes = access === 'authenticated' ? [] : [access];
  return [
    { apiKey: [] },
    { vendorApiKey: [] },
    { session: [] },
    { jwt: [] },
    ...(access === 'authenticated' || OAUTH_SCOPES.has(access) ? [{ oauth: scopes }] : []),
  ];
}

/** `/v2/api-keys/:type/:sub` as `/v2/api-keys/{type}/{sub-type}`. */
export function openApiPath(path: string, paramNames: Readonly<Record<string, string>> = {}): string {
  return path.replace(/:(\w+)/g, (_match, name: string) => `{${paramNames[name] ?? name}}`);
}

/** `POST /v2/api-keys/{type}/{sub-type}` as `postV2ApiKeysByTypeBySubType`. */
export function operationIdOf(method: string, path: string): string {
  const words = path
    .split('/')
    .flatMap((segment) => {
      const param = /^\{(.+)\}$/.exec(segment);
      const parts = (param ? param[1]! : segment).split(/[^A-Za-z0-9]+/).filter(Boolean);
      return param ? ['By', ...parts] : parts;
    })
    .map((word) => word[0]!.toUpperCase() + word.slice(1));
  return `${method.toLowerCase()}${words.join('')}`;
}

interface Operation {
  service: ServiceName;
  method: HttpMethod;
  path: string;
  scope: Access;
  input: DeclaredInput;
  forwarded?: string | undefined;
}

/** Builds one document; each problem found is collected, and all are thrown at the end. */
class DocumentBuilder {
  readonly problems: string[] = [];
  readonly paths: Record<string, OpenApiPathItem> = {};
  readonly errorShapes = new Map<string, ErrorShape>();

  constructor(private readonly ingress: boolean) {}

  add(service: ServiceName, route: DeclaredRoute): void {
    if (route.method === 'ALL') {
      if (!route.operations) {
        this.problems.push(
          `ALL ${route.path} (${service}) describes none of its operations: give all() its operations`,
        );
        return;
      }
      for (const operation of route.operations) {
        this.operation({
          service,
          method: operation.method,
          path: operation.path,
          scope: operation.scope,
          input: operation.input,
          forwarded: operation.forwarded ? route.path : undefined,
        });
      }
      return;
    }
    if (!route.input || route.scope === null) {
      this.problems.push(
        `${route.method} ${route.path} (${service}) declares no input: declare it with its scope, query and body (or 'none') instead of a bare scope`,
      );
      return;
    }
    this.operation({
      service,
      method: route.method,
      path: route.path,
      scope: route.scope,
      input: route.input,
    });
  }

  private operation(op: Operation): void {
    const label = `${op.method} ${op.path} (${op.service})`;
    const path = openApiPath(op.path, op.input.paramNames);
    const method = op.method.toLowerCase() as OpenApiMethod;
    if (this.ingress && path !== '/openapi.json') {
      const routed = serviceForPath(op.path);
      if (routed !== undefined && routed !== op.service) {
        this.problems.push(`${label}: the routing table sends ${op.path} to ${routed}`);
      }
    }
    const item = (this.paths[path] ??= {});
    const existing = item[method];
    if (existing) {
      // Every service serves its own description at the same path: one operation, each service's tag.
      if (path === '/openapi.json') existing.tags.push(op.service);
      else this.problems.push(`${label}: ${op.method} ${path} is declared twice`);
      return;
    }
    const parameters = this.parameters(op, label);
    const requestBody = op.method === 'GET' ? undefined : this.requestBody(op.input.body, label);
    item[method] = {
      operationId: operationIdOf(op.method, path),
      ...(op.input.summary ? { summary: op.input.summary } : {}),
      ...(op.input.description ? { description: op.input.description } : {}),
      tags: [op.service],
      'x-required-scope': op.scope,
      ...(op.forwarded ? { 'x-forwarded-to-provider': { pattern: op.forwarded } } : {}),
      security: securityOf(op.scope, op.input.credential),
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(requestBody ? { requestBody } : {}),
      responses: this.responses(op, label),
    };
  }

  private schema(schema: z.ZodType, io: 'input' | 'output', label: string): JsonSchema {
    try {
      const json = z.toJSONSchema(schema, { target: 'openapi-3.0', io }) as JsonSchema;
      if ('$defs' in json || 'definitions' in json) {
        this.problems.push(`${label}: a recursive schema cannot be described inline`);
      }
      return json;
    } catch (err) {
      this.problems.push(`${label}: ${err instanceof Error ? err.message : String(err)}`);
      return {};
    }
  }

  /** Path parameters first (declared ones with their schemas, the rest as text), then the query's. */
  private parameters(op: Operation, label: string): OpenApiParameter[] {
    const { params, paramNames, query, page } = op.input;
    const declared = params ? this.properties(params, label, 'path') : new Map<string, OpenApiParameter>();
    const parameters: OpenApiParameter[] = pathParameters(op.path).map((name) => {
      const documented = paramNames?.[name] ?? name;
      return (
        declared.get(documented) ?? {
          name: documented,
          in: 'path',
          required: true,
          schema: { type: 'string' },
        }
      );
    });
    const paging = page ? this.properties(pageQuery, label, 'query') : new Map<string, OpenApiParameter>();
    // A query schema that lets the page parameters through (a strict one names them) leaves them to parsePage.
    if (query !== 'none') {
      parameters.push(
        ...[...this.properties(query, label, 'query').values()].filter((p) => !paging.has(p.name)),
      );
    }
    parameters.push(...paging.values());
    const seen = new Set<string>();
    for (const parameter of parameters) {
      const key = `${parameter.in} ${parameter.name}`;
      if (seen.has(key))
        this.problems.push(`${label}: the ${parameter.in} parameter '${parameter.name}' twice`);
      seen.add(key);
    }
    return parameters;
  }

  /** An object schema's properties as parameters. */
  private properties(
    schema: z.ZodType,
    label: string,
    where: 'path' | 'query',
  ): Map<string, OpenApiParameter> {
    const json = this.schema(schema, 'input', label);
    const properties = json.properties as Record<string, JsonSchema> | undefined;
    if (json.type !== 'object' || !properties) {
      this.problems.push(`${label}: its ${where} schema is not an object of parameters`);
      return new Map();
    }
    const required = new Set((json.required as string[] | undefined) ?? []);
    return new Map(
      Object.entries(properties).map(([name, property]) => {
        const { description, ...rest } = property;
        const parameter: OpenApiParameter = {
          name,
          in: where,
          required: where === 'path' || required.has(name),
          ...(typeof description === 'string' ? { description } : {}),
          schema: rest,
        };
        return [name, parameter];
      }),
    );
  }

  private requestBody(body: BodyDeclaration, label: string): OpenApiRequestBody | undefined {
    if (body === 'none') return undefined;
    if (!('contentTypes' in body)) {
      return {
        required: true,
        content: { 'application/json': { schema: this.schema(body, 'input', label) } },
      };
    }
    const schema = body.schema ? this.schema(body.schema, 'input', label) : {};
    return {
      ...(body.description ? { description: body.description } : {}),
      required: body.optional !== true,
      content: Object.fromEntries(body.contentTypes.map((type) => [type, { schema }])),
    };
  }

  private responses(op: Operation, label: string): OpenApiOperation['responses'] {
    const { status = 200, response, responseType = 'application/json', errors } = op.input;
    let success: OpenApiResponse;
    if (status >= 300 && status < 400) {
      success = {
        description: 'A redirect.',
        headers: { Location: { description: 'Where the browser goes next.', schema: { type: 'string' } } },
      };
    } else if (response || op.input.streams) {
      success = {
        description: op.input.streams ? 'Success: one JSON answer, or a stream when asked for.' : 'Success.',
        content: {
          [responseType]: { schema: response ? this.schema(response, 'output', label) : { type: 'object' } },
          ...(op.input.streams ? { 'text/event-stream': { schema: { type: 'string' } } } : {}),
        },
      };
    } else if (op.forwarded) {
      success = {
        description: "The provider's answer, relayed as it arrives (a stream as server-sent events).",
        content: {
          'application/json': { schema: {} },
          'text/event-stream': { schema: { type: 'string' } },
          'application/octet-stream': { schema: { type: 'string', format: 'binary' } },
        },
      };
    } else {
      success = { description: 'Success.', content: { [responseType]: { schema: { type: 'object' } } } };
    }
    let refusal: OpenApiReference = { $ref: '#/components/responses/Error' };
    if (errors) {
      const known = this.errorShapes.get(errors.name);
      if (known && known !== errors) this.problems.push(`${label}: another error shape named ${errors.name}`);
      this.errorShapes.set(errors.name, errors);
      refusal = { $ref: `#/components/responses/${errors.name}` };
    }
    return {
      [String(status)]: success,
      '4XX': refusal,
      '5XX': { $ref: '#/components/responses/Error' },
    };
  }
}

/**
 * The OpenAPI 3.0 document describing `services`' routes: one tag per service, one operation
 * per route (a pattern route's declared operations one by one), security and the required
 * scope of each, its parameters and body from the zod schemas it validates them with (as
 * clients send them: `io: 'input'`), and its answers; refusals in the one error shape.
 * With `ingress`, each path must be one the routing table sends to the service declaring it.
 * Throws an OpenApiError naming every route it cannot describe.
 */
export function openApiDocument(
  services: readonly ServiceRoutes[],
  options: { ingress?: boolean } = {},
): OpenApiDocument {
  const builder = new DocumentBuilder(options.ingress ?? false);
  for (const { service, routes } of services) for (const route of routes) builder.add(service, route);
  const ids = new Map<string, string>();
  for (const [path, item] of Object.entries(builder.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const other = ids.get(operation.operationId);
      if (other) builder.problems.push(`${method.toUpperCase()} ${path}: operationId of ${other} too`);
      ids.set(operation.operationId, `${method.toUpperCase()} ${path}`);
    }
  }
  const schemas: Record<string, JsonSchema> = {
    Error: z.toJSONSchema(errorBodySchema, { target: 'openapi-3.0' }) as JsonSchema,
  };
  const responses: Record<string, OpenApiResponse> = {
    Error: {
      description: 'Refused or failed, in the one error shape.',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    },
  };
  for (const [name, shape] of [...builder.errorShapes].sort(([a], [b]) => a.localeCompare(b))) {
    schemas[name] = z.toJSONSchema(shape.schema, { target: 'openapi-3.0' }) as JsonSchema;
    responses[name] = {
      description: `Refused, in the ${name} shape.`,
      content: { [shape.contentType]: { schema: { $ref: `#/components/schemas/${name}` } } },
    };
  }
  if (builder.problems.length > 0) {
    throw new OpenApiError(`the routes cannot be described:\n  ${builder.problems.join('\n  ')}`);
  }
  const names = services.map((s) => s.service);
  const single = names.length === 1 ? names[0] : undefined;
  return {
    openapi: OPENAPI_VERSION,
    info: {
      title: single ? `Switchyard ${single}` : 'Switchyard',
      version: runtimePackage.version,
      description: single
        ? `The HTTP routes of Switchyard's ${single} service. ${SERVICE_DESCRIPTIONS[single]}`
        : `The HTTP routes of Switchyard's services (${names.join(', ')}), as the ingress routes them.`,
    },
    tags: names.map((name) => ({ name, description: SERVICE_DESCRIPTIONS[name] })),
    paths: builder.paths,
    components: { schemas, responses, securitySchemes: SECURITY_SCHEMES },
  };
}

/**
 * Adds `GET /openapi.json` to a service's router: public, and itself a declared route, it
 * answers the description of every route the router serves (made at the first request).
 */
export function serveOpenApi(router: ScopedRouter, service: ServiceName): ScopedRouter {
  let document: string | undefined;
  return router.get(
    '/openapi.json',
    {
      scope: 'public',
      query: 'none',
      summary: `The OpenAPI 3.0 description of the routes this service serves (through the ingress and in all-in-one, of every service).`,
    },
    (_req, res) => {
      document ??= JSON.stringify(openApiDocument([{ service, routes: router.routes() }]));
      res.type('application/json').send(document);
    },
  );
}

/**
 * Answers `GET /openapi.json` with a description made once, at the first request, and passes
 * every other request on: the whole ingress's description where one process answers for all.
 */
export function serveDescription(describe: () => OpenApiDocument): RequestHandler {
  let description: string | undefined;
  return (req, res, next) => {
    if (req.path !== '/openapi.json' || req.method !== 'GET') return next();
    description ??= JSON.stringify(describe());
    res.type('application/json').send(description);
  };
}
