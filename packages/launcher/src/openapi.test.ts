import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { createLogger, createMetrics } from '@switchyard/core';
import { createHttpApp, listen } from '@switchyard/http';
import {
  openApiDocument,
  openApiPath,
  OpenApiError,
  ScopedRouter,
  type DeclaredRoute,
  type OpenApiDocument,
  type ServiceDefinition,
  type ServiceName,
} from '@switchyard/runtime';
import { startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { ingressDocument, referencePages } from './openapi.ts';
import { structuralProblems } from './openapi-structure.ts';
import { allServices } from './services.ts';

const root = new URL('../../..', import.meta.url).pathname;
const HTTP_SERVICES: ServiceName[] = ['control-plane', 'admin', 'log-export', 'gateway'];

/** Each operation a route serves, as `METHOD /openapi/{path}`: a pattern route's declared ones. */
function operationsOf(route: DeclaredRoute): Array<{ key: string; scope: string | null }> {
  if (route.method === 'ALL') {
    assert.ok(route.operations && route.operations.length > 0, `ALL ${route.path} describes its operations`);
    return route.operations.map((op) => ({
      key: `${op.method.toLowerCase()} ${openApiPath(op.path, op.input.paramNames)}`,
      scope: op.scope,
    }));
  }
  return [
    {
      key: `${route.method.toLowerCase()} ${openApiPath(route.path, route.input?.paramNames)}`,
      scope: route.scope,
    },
  ];
}

function assertDescribes(document: OpenApiDocument, service: ServiceName, routes: DeclaredRoute[]): void {
  for (const { key, scope } of routes.flatMap(operationsOf)) {
    const [method, path] = key.split(' ') as [keyof OpenApiDocument['paths'][string], string];
    const operation = document.paths[path]?.[method];
    assert.ok(operation, `${service}: ${key} is described`);
    assert.ok(operation.tags.includes(service), `${service}: ${key} is tagged ${service}`);
    assert.equal(operation['x-required-scope'], scope, `${service}: ${key}'s scope`);
  }
}

const committed = () => JSON.parse(readFileSync(join(root, 'docs/openapi.json'), 'utf8')) as OpenApiDocument;

describe('the OpenAPI description of the running services', () => {
  let h: ServiceHarness;
  before(async () => {
    h = await startServiceHarness({ services: allServices });
  });
  after(() => h?.close());

  test('describes every route every service serves, with its method, path and scope', () => {
    const generated = ingressDocument();
    const file = committed();
    for (const name of HTTP_SERVICES) {
      const routes = h.instance(name).routes ?? [];
      assert.ok(routes.length > 0, `${name} serves routes`);
      assertDescribes(generated, name, routes);
      assertDescribes(file, name, routes);
    }
    // Described without starting anything, the routes are the served ones, schemas and all.
    const served = openApiDocument(
      allServices.map(({ name }) => ({ service: name, routes: h.instance(name).routes ?? [] })),
      { ingress: true },
    );
    assert.deepEqual(served, generated);
    assert.deepEqual(file, JSON.parse(JSON.stringify(generated)), 'docs/openapi.json is up to date');
  });

  test('GET /openapi.json on each running service answers its own routes, with no key', async () => {
    const logger = createLogger('openapi-test', 'error');
    logger.silent = true;
    for (const name of HTTP_SERVICES) {
      const instance = h.instance(name);
      // The service as its own process serves it (see runtime.ts).
      const app = createHttpApp({
        service: name,
        logger,
        metrics: createMetrics(),
        readiness: {},
        routers: [{ router: instance.router! }],
      });
      const server = await listen(app, '127.0.0.1', 0);
      try {
        const res = await fetch(`http://127.0.0.1:${server.port}/openapi.json`);
        assert.equal(res.status, 200, name);
        assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
        const document = (await res.json()) as OpenApiDocument;
        assert.match(document.openapi, /^3\.0\.\d+$/);
        assert.deepEqual(
          document.tags.map((t) => t.name),
          [name],
        );
        assert.deepEqual(structuralProblems(document), [], name);
        const paths = new Set(
          (instance.routes ?? []).flatMap(operationsOf).map(({ key }) => key.split(' ')[1]),
        );
        assert.deepEqual(new Set(Object.keys(document.paths)), paths, `${name} describes its paths only`);
        assertDescribes(document, name, instance.routes ?? []);
      } finally {
        await server.close();
      }
    }
  });

  test("the one entry point (all-in-one, the harness) answers GET /openapi.json with every service's routes", async () => {
    const res = await h.request('GET', '/openapi.json');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, JSON.parse(JSON.stringify(ingressDocument())));
  });
});

describe('the ingress description', () => {
  const document = ingressDocument();

  test('is an OpenAPI 3.0 document, structurally sound', () => {
    assert.equal(document.openapi, '3.0.3');
    assert.deepEqual(structuralProblems(document), []);
    assert.deepEqual(structuralProblems(committed()), []);
    assert.deepEqual(
      document.tags.map((t) => t.name),
      allServices.map((s) => s.name),
      'one tag per service, all five',
    );
  });

  test('is the same each time it is made', () => {
    assert.equal(JSON.stringify(ingressDocument()), JSON.stringify(document));
  });

  test('describes a route with its parameters, body, security and errors', () => {
    const create = document.paths['/v2/api-keys/{type}/{sub-type}']?.post;
    assert.ok(create);
    assert.equal(create['x-required-scope'], 'api_keys.create');
    assert.deepEqual(
      create.parameters?.map((p) => `${p.in} ${p.name} ${p.required}`),
      ['path type true', 'path sub-type true'],
    );
    assert.deepEqual(create.parameters?.[1]?.schema, { type: 'string', enum: ['service', 'user'] });
    const body = create.requestBody?.content['application/json']?.schema as {
      required: string[];
      properties: Record<string, unknown>;
    };
    assert.deepEqual(body.required, ['name']);
    assert.ok('rotation_policy' in body.properties);
    assert.deepEqual(
      create.security.map((s) => Object.keys(s)[0]),
      ['apiKey', 'vendorApiKey', 'session', 'jwt'],
    );
    assert.deepEqual(create.responses['4XX'], { $ref: '#/components/responses/Error' });
    assert.deepEqual(document.components.securitySchemes.vendorApiKey, {
      type: 'apiKey',
      in: 'header',
      name: 'x-vendor-api-key',
      description: document.components.securitySchemes.vendorApiKey!.description,
    });

    // As the client sends it: a default is not required, and shown.
    const workspace = document.paths['/v2/workspaces/{id}']?.get;
    assert.deepEqual(
      workspace?.parameters?.find((p) => p.name === 'name_format'),
      {
        name: 'name_format',
        in: 'query',
        required: false,
        schema: { default: 'display', type: 'string', enum: ['display', 'plain'] },
      },
    );
    const list = document.paths['/v2/workspaces']?.get;
    assert.deepEqual(
      list?.parameters?.map((p) => p.name),
      ['current_page', 'page_size'],
    );

    const token = document.paths['/oauth/token']?.post;
    assert.deepEqual(Object.keys(token?.requestBody?.content ?? {}), [
      'application/x-www-form-urlencoded',
      'application/json',
    ]);
    assert.deepEqual(token?.security, [{ oauthClient: [] }, {}]);
    assert.deepEqual(token?.responses['4XX'], { $ref: '#/components/responses/OAuthError' });

    const scim = document.paths['/scim/{organisationId}/Users']?.post;
    assert.deepEqual(scim?.security, [{ scimToken: [] }]);
    assert.ok(scim?.responses['201']);
    assert.deepEqual(Object.keys(scim?.requestBody?.content ?? {}), [
      'application/scim+json',
      'application/json',
    ]);

    assert.deepEqual(document.paths['/v1/auth/sso/login']?.get?.security, []);
    assert.ok(document.paths['/v1/auth/sso/login']?.get?.responses['302']);
  });

  test("documents the gateway's forwarded /v1/* operations as forwarded to the provider", () => {
    const forwarded = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([, op]) => op['x-forwarded-to-provider'])
        .map(([method, op]) => ({ path, method, op })),
    );
    assert.ok(forwarded.length >= 32, `${forwarded.length} forwarded operations`);
    for (const { path, op } of forwarded) {
      assert.ok(path.startsWith('/v1/'), path);
      assert.deepEqual(op.tags, ['gateway']);
      assert.ok(
        new RegExp(op['x-forwarded-to-provider']!.pattern).test(path.replace(/\{[^}]+\}/g, 'x')),
        path,
      );
    }
    const upload = document.paths['/v1/files']?.post;
    assert.deepEqual(Object.keys(upload?.requestBody?.content ?? {}), [
      'application/json',
      'multipart/form-data',
    ]);
    assert.equal(document.paths['/v1/files']?.get?.['x-required-scope'], 'files.read');
    const run = document.paths['/v1/threads/{thread_id}/runs/{run_id}']?.post;
    assert.equal(run?.['x-required-scope'], 'assistants.write');
    assert.equal(run?.requestBody?.required, false);
    assert.ok(!document.paths['/v1/fine_tuning/jobs/{fine_tuning_job_id}/cancel']?.post?.requestBody);
    assert.equal(document.paths['/v1/chat/completions']?.post?.['x-forwarded-to-provider'], undefined);
  });

  test('a route declared without a decision on its input stops the generator, naming it', () => {
    const logExport = allServices.find((s) => s.name === 'log-export')!;
    const undecided: ServiceDefinition = {
      ...logExport,
      describeRoutes: () => [
        ...logExport.describeRoutes!(),
        ...new ScopedRouter()
          .get('/v1/logs/:id/undecided', 'logs.view', (_req, res) => res.json({}))
          .routes(),
      ],
    };
    assert.throws(
      () => ingressDocument(allServices.map((s) => (s === logExport ? undecided : s))),
      (err: Error) =>
        err instanceof OpenApiError &&
        err.message.includes('GET /v1/logs/:id/undecided (log-export) declares no input'),
    );
  });

  test('a route the routing table sends to another service stops the generator, naming both', () => {
    const admin = allServices.find((s) => s.name === 'admin')!;
    const misplaced: ServiceDefinition = {
      ...admin,
      describeRoutes: () => [
        ...new ScopedRouter()
          .get('/v1/logs/elsewhere', { scope: 'logs.view', query: 'none' }, (_req, res) => res.json({}))
          .routes(),
      ],
    };
    assert.throws(
      () => ingressDocument(allServices.map((s) => (s === admin ? misplaced : s))),
      /GET \/v1\/logs\/elsewhere \(admin\): the routing table sends \/v1\/logs\/elsewhere to log-export/,
    );
  });

  test('its reference pages: one per service, each operation with its method, path, scope, parameters and body fields', () => {
    const pages = referencePages(document);
    assert.deepEqual(
      [...pages.keys()],
      allServices.map((s) => `${s.name}.md`),
    );
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(item)) {
        for (const tag of op.tags) {
          const page = pages.get(`${tag}.md`)!;
          const section = page.split(`\n## ${method.toUpperCase()} ${path}\n`)[1]?.split('\n## ')[0];
          assert.ok(section, `${tag}.md has ${method.toUpperCase()} ${path}`);
          assert.ok(section.includes(`- Scope: \`${op['x-required-scope']}\``), `${method} ${path}: scope`);
          if (op.summary) assert.ok(section.startsWith(`\n${op.summary}`), `${method} ${path}: summary`);
          for (const parameter of op.parameters ?? []) {
            assert.ok(
              section.includes(`| \`${parameter.name}\` | ${parameter.in} |`),
              `${path}: ${parameter.name}`,
            );
          }
        }
      }
    }
    const workspaces = pages.get('control-plane.md')!;
    assert.ok(workspaces.includes('| `security_settings` |'), 'body fields are tabled');
    assert.ok(workspaces.includes('| `defaults.user_api_key_config` |'), 'nested fields are tabled');
    assert.match(pages.get('policy.md')!, /It serves no HTTP route\./);
  });
});

describe('scripts/openapi.ts', { concurrency: true }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'openapi-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  const run = (...args: string[]) =>
    promisify(execFile)(process.execPath, ['--import', 'tsx', 'scripts/openapi.ts', ...args], {
      cwd: root,
    }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (err: { code: number; stdout: string; stderr: string }) => ({ ...err }),
    );

  test(
    '--check fails on a stale copy, naming the command, and passes once --write has brought it up to date',
    { timeout: 240_000 },
    async () => {
      const out = join(dir, 'docs');
      mkdirSync(out);
      cpSync(join(root, 'docs/openapi.json'), join(out, 'openapi.json'));
      cpSync(join(root, 'docs/api'), join(out, 'api'), { recursive: true });
      assert.equal((await run('--check', '--out', out)).code, 0, 'a copy of docs/ is up to date');

      const stale = JSON.parse(readFileSync(join(out, 'openapi.json'), 'utf8')) as OpenApiDocument;
      delete stale.paths['/v1/logs/{id}'];
      writeFileSync(join(out, 'openapi.json'), `${JSON.stringify(stale, null, 2)}\n`);
      writeFileSync(join(out, 'api/gateway.md'), '# out of date\n');
      const before = readFileSync(join(out, 'openapi.json'), 'utf8');

      const refused = await run('--check', '--out', out);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /openapi\.json, .*api\/gateway\.md: not the description the routes give/);
      assert.ok(
        refused.stderr.includes(`run: node --import tsx scripts/openapi.ts --write --out ${out}`),
        refused.stderr,
      );
      assert.equal(readFileSync(join(out, 'openapi.json'), 'utf8'), before, '--check leaves the files alone');

      assert.equal((await run('--write', '--out', out)).code, 0);
      assert.equal(
        readFileSync(join(out, 'openapi.json'), 'utf8'),
        readFileSync(join(root, 'docs/openapi.json'), 'utf8'),
      );
      assert.equal((await run('--check', '--out', out)).code, 0);
    },
  );
});
