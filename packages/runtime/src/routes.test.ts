import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { apiRoutes, routeForPath, routes, serviceForPath } from './routes.ts';

describe('the routing table (files/routes.json)', () => {
  test('sends /openapi.json, and that path only, to control-plane', () => {
    assert.equal(serviceForPath('/openapi.json'), 'control-plane');
    assert.equal(serviceForPath('/openapi.jsonx'), undefined);
    assert.equal(serviceForPath('/openapi.json/x'), undefined);
    assert.equal(serviceForPath('/openapi'), undefined);
  });

  test('a prefix matches itself and the paths below it, not a longer name', () => {
    assert.equal(serviceForPath('/v1/logs'), 'log-export');
    assert.equal(serviceForPath('/v1/logs/abc'), 'log-export');
    assert.equal(serviceForPath('/v1/logsx'), 'gateway');
    assert.equal(serviceForPath('/v1/admin/users/u1'), 'control-plane');
    assert.equal(serviceForPath('/v1/chat/completions'), 'gateway');
    assert.equal(serviceForPath('/v1/guardrails'), 'control-plane');
    assert.equal(serviceForPath('/v1/guardrails/guard_pii-re-7f1051ab/versions'), 'control-plane');
    assert.equal(serviceForPath('/nowhere'), undefined);
  });

  test('marks a route exact with true or not at all', () => {
    for (const route of routes) {
      assert.ok(
        route.exact === undefined || route.exact === true,
        `${route.prefix}: exact is true or absent`,
      );
    }
  });

  test('sends every path no API route takes to the console, last, and no API path to it', () => {
    const last = routes.at(-1)!;
    assert.deepEqual(last, { prefix: '/', service: 'console' });
    assert.equal(routes.filter((route) => route.service === 'console').length, 1);
    for (const path of ['/', '/logs', '/logs/abc', '/assets/index-abc.js', '/nowhere', '/v1x']) {
      assert.equal(routeForPath(path)?.service, 'console', path);
      assert.equal(serviceForPath(path), undefined, path);
    }
    for (const route of apiRoutes) {
      assert.notEqual(route.prefix, '/');
      assert.equal(routeForPath(route.prefix)?.service, serviceForPath(route.prefix));
      assert.notEqual(serviceForPath(route.prefix), undefined, route.prefix);
    }
    assert.equal(apiRoutes.length, routes.length - 1);
  });
});
