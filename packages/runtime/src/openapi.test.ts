import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { z } from 'zod';
import { createHttpApp, listen } from '@switchyard/http';
import { createLogger, createMetrics } from '@switchyard/core';
import { openApiDocument, OpenApiError, operationIdOf, openApiPath, serveOpenApi } from './openapi.ts';
import { ScopedRouter } from './scoped-router.ts';

const ok = (_req: unknown, res: { json(body: unknown): unknown }) => void res.json({});

describe('openApiDocument', () => {
  test('a route declared with a bare scope stops it, naming the route and its service', () => {
    const routes = new ScopedRouter()
      .get('/v1/logs/:id', { scope: 'logs.view', query: 'none' }, ok)
      .post('/v1/logs', 'logs.export', ok)
      .routes();
    assert.throws(
      () => openApiDocument([{ service: 'log-export', routes }]),
      (err: Error) =>
        err instanceof OpenApiError &&
        /POST \/v1\/logs \(log-export\) declares no input/.test(err.message) &&
        !err.message.includes('GET /v1/logs/:id'),
    );
  });

  test('a pattern route that describes no operation stops it, naming the pattern', () => {
    const routes = new ScopedRouter()
      .all(/^\/v1\/files(\/|$)/, () => 'files.read', [
        { method: 'GET', path: '/v1/files', scope: 'files.read' },
      ])
      .routes();
    assert.throws(
      () => openApiDocument([{ service: 'gateway', routes }]),
      /ALL \^\\\/v1\\\/files.* \(gateway\) describes none of its operations/,
    );
  });

  test('a method and path declared twice stops it', () => {
    const twice = new ScopedRouter().get('/x', { scope: 'public', query: 'none' }, ok).routes();
    assert.throws(
      () =>
        openApiDocument([
          { service: 'admin', routes: twice },
          { service: 'gateway', routes: twice },
        ]),
      /GET \/x \(gateway\): GET \/x is declared twice/,
    );
  });

  test('paths, parameters and bodies from the declared schemas, as clients send them', () => {
    const routes = new ScopedRouter()
      .post(
        '/v2/keys/:type/:sub',
        {
          scope: 'api_keys.create',
          summary: 'Creates a key.',
          params: z.object({ type: z.enum(['a', 'b']), 'sub-type': z.string() }),
          paramNames: { sub: 'sub-type' },
          query: z.object({
            dry_run: z
              .string()
              .transform((v) => v === 'true')
              .optional(),
          }),
          body: z.strictObject({
            name: z.string().meta({ description: 'Its name.' }),
            size: z.int().default(1),
            at: z.iso.datetime().transform((v) => new Date(v)),
          }),
          status: 201,
        },
        ok,
      )
      .get(
        '/v2/keys',
        {
          scope: 'api_keys.list',
          query: z.object({ current_page: z.string().optional(), ids: z.string() }),
          page: true,
        },
        ok,
      )
      .routes();
    const document = openApiDocument([{ service: 'control-plane', routes }]);
    const create = document.paths['/v2/keys/{type}/{sub-type}']?.post;
    assert.equal(create?.operationId, 'postV2KeysByTypeBySubType');
    assert.equal(create?.summary, 'Creates a key.');
    assert.deepEqual(create?.parameters, [
      { name: 'type', in: 'path', required: true, schema: { type: 'string', enum: ['a', 'b'] } },
      { name: 'sub-type', in: 'path', required: true, schema: { type: 'string' } },
      { name: 'dry_run', in: 'query', required: false, schema: { type: 'string' } },
    ]);
    const body = create?.requestBody;
    assert.equal(body?.required, true);
    const schema = body?.content['application/json']?.schema as {
      properties: Record<string, unknown>;
      required: string[];
    };
    assert.deepEqual(schema.required, ['name', 'at'], 'a field with a default is not required of the client');
    assert.deepEqual(schema.properties.size, {
      default: 1,
      type: 'integer',
      minimum: Number.MIN_SAFE_INTEGER,
      maximum: Number.MAX_SAFE_INTEGER,
    });
    assert.equal(
      (schema.properties.at as { type: string }).type,
      'string',
      'a transform shows what it reads',
    );
    assert.deepEqual(schema.properties.name, { type: 'string', description: 'Its name.' });
    assert.ok(create?.responses['201']);
    // The page parameters are parsePage's, whatever the query schema lets through.
    assert.deepEqual(
      document.paths['/v2/keys']?.get?.parameters?.map(
        (p) => `${p.name} ${p.required} ${String(p.schema.type)}`,
      ),
      ['ids true string', 'current_page false integer', 'page_size false integer'],
    );
  });

  test('bodies in their own terms, answers, redirects and protocol error shapes', () => {
    const oauthError = {
      name: 'OAuthError',
      contentType: 'application/json',
      schema: z.object({ error: z.string() }),
    };
    const routes = new ScopedRouter()
      .post(
        '/oauth/token',
        {
          scope: 'public',
          query: 'none',
          body: {
            contentTypes: ['application/x-www-form-urlencoded', 'application/json'],
            description: 'The grant.',
          },
          credential: 'oauth_client',
          errors: oauthError,
        },
        ok,
      )
      .put(
        '/v1/things/:id',
        {
          scope: 'configs.update',
          query: 'none',
          body: { contentTypes: ['application/json'], schema: z.object({ on: z.boolean() }), optional: true },
          response: z.object({ id: z.string(), at: z.iso.datetime() }),
        },
        ok,
      )
      .get('/v1/login', { scope: 'public', query: 'none', status: 302 }, ok)
      .routes();
    const document = openApiDocument([{ service: 'control-plane', routes }]);
    const token = document.paths['/oauth/token']?.post;
    assert.deepEqual(token?.requestBody, {
      description: 'The grant.',
      required: true,
      content: { 'application/x-www-form-urlencoded': { schema: {} }, 'application/json': { schema: {} } },
    });
    assert.deepEqual(token?.security, [{ oauthClient: [] }, {}]);
    assert.deepEqual(token?.responses['4XX'], { $ref: '#/components/responses/OAuthError' });
    assert.deepEqual(token?.responses['5XX'], { $ref: '#/components/responses/Error' });
    assert.deepEqual(document.components.schemas.OAuthError, {
      type: 'object',
      properties: { error: { type: 'string' } },
      required: ['error'],
      additionalProperties: false,
    });
    const put = document.paths['/v1/things/{id}']?.put;
    assert.equal(put?.requestBody?.required, false);
    // What the route answers: the schema's output.
    const answer = put?.responses['200'] as { content: Record<string, { schema: Record<string, unknown> }> };
    const answered = answer.content['application/json']?.schema;
    assert.deepEqual(answered?.required, ['id', 'at']);
    assert.deepEqual(Object.keys(answered?.properties as object), ['id', 'at']);
    assert.deepEqual(Object.keys(document.paths['/v1/login']?.get?.responses['302'] ?? {}), [
      'description',
      'headers',
    ]);
    assert.deepEqual(document.components.schemas.Error, {
      type: 'object',
      properties: {
        error: {
          type: 'object',
          properties: {
            message: { type: 'string', description: 'What went wrong, for a person.' },
            type: { type: 'string', description: 'The kind of error, e.g. `invalid_request_error`.' },
            param: { nullable: true, description: 'The parameter at fault, when one is.', type: 'string' },
            code: { nullable: true, description: 'A stable code, e.g. `missing_scope`.', type: 'string' },
          },
          required: ['message', 'type', 'param', 'code'],
          additionalProperties: false,
        },
      },
      required: ['error'],
      additionalProperties: false,
      description: 'The one error shape.',
    });
  });

  test('who may call: no one needed, any authenticated caller, or a key with the scope (OAuth tokens when they can hold it)', () => {
    const routes = new ScopedRouter()
      .get('/open', { scope: 'public', query: 'none' }, ok)
      .get('/self', { scope: 'authenticated', query: 'none' }, ok)
      .get('/configs', { scope: 'configs.list', query: 'none' }, ok)
      .post('/workspaces', { scope: 'workspaces.create', query: 'none', body: 'none' }, ok)
      .routes();
    const document = openApiDocument([{ service: 'control-plane', routes }]);
    const security = (path: string, method: 'get' | 'post' = 'get') =>
      document.paths[path]?.[method]?.security;
    assert.deepEqual(security('/open'), []);
    assert.deepEqual(security('/self'), [
      { apiKey: [] },
      { vendorApiKey: [] },
      { session: [] },
      { jwt: [] },
      { oauth: [] },
    ]);
    assert.deepEqual(security('/configs')?.at(-1), { oauth: ['configs.list'] });
    assert.equal(document.paths['/configs']?.get?.['x-required-scope'], 'configs.list');
    assert.ok(
      !security('/workspaces', 'post')?.some((s) => 'oauth' in s),
      'an organisation scope is no OAuth token’s',
    );
  });

  test('is the same document each time', () => {
    const routes = () =>
      new ScopedRouter()
        .get('/a/:id', { scope: 'configs.read', query: z.object({ q: z.string().optional() }) }, ok)
        .routes();
    assert.equal(
      JSON.stringify(openApiDocument([{ service: 'admin', routes: routes() }])),
      JSON.stringify(openApiDocument([{ service: 'admin', routes: routes() }])),
    );
  });

  test('openApiPath and operationIdOf', () => {
    assert.equal(
      openApiPath('/v2/api-keys/:type/:sub', { sub: 'sub-type' }),
      '/v2/api-keys/{type}/{sub-type}',
    );
    assert.equal(
      operationIdOf('GET', '/.well-known/oauth-authorization-server'),
      'getWellKnownOauthAuthorizationServer',
    );
    assert.equal(
      operationIdOf('DELETE', '/v1/admin/organisation/sso/{client_id}'),
      'deleteV1AdminOrganisationSsoByClientId',
    );
  });
});

describe('serveOpenApi', () => {
  test("GET /openapi.json is a public route of the router, answering the router's description", async () => {
    const router = serveOpenApi(
      new ScopedRouter().get('/v1/logs/:id', { scope: 'logs.view', query: 'none' }, ok),
      'log-export',
    );
    assert.deepEqual(
      router.routes().map((r) => `${r.method} ${r.path} ${String(r.scope)}`),
      ['GET /v1/logs/:id logs.view', 'GET /openapi.json public'],
    );
    const logger = createLogger('test', 'error');
    logger.silent = true;
    const app = createHttpApp({
      service: 'test',
      logger,
      metrics: createMetrics(),
      readiness: {},
      routers: [{ router: router.router }],
    });
    const server = await listen(app, '127.0.0.1', 0);
    try {
      const res = await fetch(`http://127.0.0.1:${server.port}/openapi.json`);
      assert.equal(res.status, 200);
      assert.deepEqual(
        await res.json(),
        JSON.parse(JSON.stringify(openApiDocument([{ service: 'log-export', routes: router.routes() }]))),
      );
    } finally {
      await server.close();
    }
  });
});
