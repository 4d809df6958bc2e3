import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createLogger, createMetrics } from '@switchyard/core';
import { createHttpApp, listen } from '@switchyard/http';
import { standaloneRouters, type OpenApiDocument, type ServiceName } from '@switchyard/runtime';
import { startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { ingressDocument, standaloneOptions } from './openapi.ts';
import { allServices } from './services.ts';

const logger = createLogger('standalone-openapi-test', 'error');
logger.silent = true;

/** The services (tags) whose operations a document describes at `path`. */
function tagsAt(document: OpenApiDocument, path: string): string[] {
  return [...new Set(Object.values(document.paths[path] ?? {}).flatMap((operation) => operation.tags))];
}

describe('GET /openapi.json of a service run as its own process (distributed mode)', () => {
  let h: ServiceHarness;
  // Each service's HTTP server as `switchyard <service>` builds it (runStandalone), with what the
  // launcher gives that service, on the instances the harness started.
  const servers = new Map<ServiceName, { url: string; close(): Promise<void> }>();
  before(async () => {
    h = await startServiceHarness({ services: allServices });
    for (const definition of allServices) {
      const instance = h.instance(definition.name);
      if (!instance.router) continue;
      const app = createHttpApp({
        service: definition.name,
        logger,
        metrics: createMetrics(),
        readiness: {},
        routers: standaloneRouters(definition, instance, h.bus, logger, standaloneOptions(definition.name)),
      });
      const server = await listen(app, '127.0.0.1', 0);
      servers.set(definition.name, { url: `http://127.0.0.1:${server.port}`, close: () => server.close() });
    }
  });
  after(async () => {
    for (const server of servers.values()) await server.close();
    await h?.close();
  });

  async function description(service: ServiceName): Promise<OpenApiDocument> {
    const res = await fetch(`${servers.get(service)!.url}/openapi.json`);
    assert.equal(res.status, 200, service);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    return (await res.json()) as OpenApiDocument;
  }

  test("control-plane, where the ingress sends /openapi.json, answers the ingress's whole description", async () => {
    const document = await description('control-plane');
    assert.deepEqual(tagsAt(document, '/v1/chat/completions'), ['gateway']);
    assert.deepEqual(tagsAt(document, '/v1/admin/organisation/settings'), ['admin']);
    assert.deepEqual(tagsAt(document, '/v1/audit-logs'), ['log-export']);
    assert.deepEqual(tagsAt(document, '/v1/configs'), ['control-plane']);
    assert.deepEqual(
      document.tags.map((tag) => tag.name),
      allServices.map((service) => service.name),
    );
    assert.deepEqual(document, JSON.parse(JSON.stringify(ingressDocument())));
    assert.deepEqual(await description('control-plane'), document, 'the same document each time');
  });

  test('another service answers its own routes only', async () => {
    const document = await description('admin');
    assert.deepEqual(
      document.tags.map((tag) => tag.name),
      ['admin'],
    );
    assert.deepEqual(tagsAt(document, '/v1/admin/organisation/settings'), ['admin']);
    assert.equal(document.paths['/v1/chat/completions'], undefined);
    assert.equal(document.paths['/v1/configs'], undefined);
    assert.equal(document.paths['/v1/audit-logs'], undefined);
  });

  test('only the service the routing table names is given the ingress description', () => {
    for (const definition of allServices) {
      const given = standaloneOptions(definition.name).ingressDescription !== undefined;
      assert.equal(given, definition.name === 'control-plane', definition.name);
    }
  });
});
