import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { gzipSync } from 'node:zlib';
import express, { Router } from 'express';
import { createMetrics } from '@switchyard/core';
import { createHttpApp, listen } from '@switchyard/http';
import { captureLogger } from '@switchyard/core/testing';
import { hasJsonContentType, leanBody, parseByteLimit } from './request-body.ts';

describe('parseByteLimit', () => {
  test('reads sizes as body-parser does (binary units)', () => {
    assert.equal(parseByteLimit('25mb'), 25 * 1024 * 1024);
    assert.equal(parseByteLimit('100kb'), 102_400);
    assert.equal(parseByteLimit('1.5KB'), 1536);
    assert.equal(parseByteLimit('512'), 512);
    assert.ok(Number.isNaN(parseByteLimit('lots')));
  });
});

describe('hasJsonContentType', () => {
  const typed = (type?: string) => ({ headers: type === undefined ? {} : { 'content-type': type } }) as never;
  test('takes application/json and application/*+json, with parameters', () => {
    assert.ok(hasJsonContentType(typed('application/json')));
    assert.ok(hasJsonContentType(typed('Application/JSON; charset=utf-8')));
    assert.ok(hasJsonContentType(typed('application/vnd.api+json')));
  });
  test('leaves everything else to express.raw', () => {
    assert.ok(!hasJsonContentType(typed()));
    assert.ok(!hasJsonContentType(typed('text/plain')));
    assert.ok(!hasJsonContentType(typed('multipart/form-data; boundary=x')));
    assert.ok(!hasJsonContentType(typed('application/+json')));
  });
});

describe('leanBody', () => {
  let url = '';
  let close: () => Promise<void>;

  before(async () => {
    const router = Router();
    const limit = '1kb';
    const echo: express.RequestHandler = (req, res) => {
      const body = req.body as unknown;
      res.json({ buffer: Buffer.isBuffer(body), text: Buffer.isBuffer(body) ? body.toString('utf8') : null });
    };
    router.post('/any', leanBody(limit, express.raw({ type: () => true, limit })), echo);
    router.post(
      '/json',
      leanBody(
        limit,
        express.raw({ type: ['application/json', 'application/*+json'], limit }),
        hasJsonContentType,
      ),
      echo,
    );
    const app = createHttpApp({
      service: 'body-test',
      logger: captureLogger().logger,
      metrics: createMetrics(),
      readiness: {},
      routers: [{ router }],
    });
    const server = await listen(app, '127.0.0.1', 0);
    url = `http://127.0.0.1:${server.port}`;
    close = server.close;
  });
  after(() => close());

  /** A request written in the given pieces, with or without a Content-Length. */
  function send(
    path: string,
    pieces: Buffer[],
    headers: Record<string, string>,
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    return new Promise((resolve, reject) => {
      const req = httpRequest(`${url}${path}`, { method: 'POST', headers }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode!, body: JSON.parse(text) as Record<string, unknown> }),
        );
      });
      req.on('error', reject);
      (async () => {
        for (const piece of pieces) {
          req.write(piece);
          await new Promise((r) => setTimeout(r, 5));
        }
        req.end();
      })().catch(reject);
    });
  }

  test('reads a body of declared length, in one piece or several', async () => {
    const one = await send('/any', [Buffer.from('{"a":1}')], { 'content-length': '7' });
    assert.deepEqual(one, { status: 200, body: { buffer: true, text: '{"a":1}' } });
    const pieces = [Buffer.from('{"a":'), Buffer.from('"é"'), Buffer.from('}')];
    const length = String(Buffer.concat(pieces).length);
    const several = await send('/any', pieces, { 'content-length': length });
    assert.deepEqual(several, { status: 200, body: { buffer: true, text: '{"a":"é"}' } });
  });

  test('an empty body is an empty Buffer, as express.raw makes it', async () => {
    assert.deepEqual(await send('/any', [], { 'content-length': '0' }), {
      status: 200,
      body: { buffer: true, text: '' },
    });
  });

  test('chunked and compressed bodies are read by express.raw', async () => {
    const chunked = await send('/any', [Buffer.from('{"b":'), Buffer.from('2}')], {
      'transfer-encoding': 'chunked',
    });
    assert.deepEqual(chunked, { status: 200, body: { buffer: true, text: '{"b":2}' } });
    const zipped = gzipSync('{"c":3}');
    const inflated = await send('/any', [zipped], {
      'content-encoding': 'gzip',
      'content-length': String(zipped.length),
    });
    assert.deepEqual(inflated, { status: 200, body: { buffer: true, text: '{"c":3}' } });
  });

  test('a declared length over the limit is the same 413 as before', async () => {
    const big = Buffer.alloc(2048, 'x');
    const res = await send('/any', [big], { 'content-length': String(big.length) });
    assert.equal(res.status, 413);
    assert.equal((res.body.error as Record<string, unknown>).type, 'invalid_request_error');
  });

  test('on a JSON-only route, other content types are left unread', async () => {
    const json = await send('/json', [Buffer.from('{}')], {
      'content-type': 'application/json',
      'content-length': '2',
    });
    assert.deepEqual(json, { status: 200, body: { buffer: true, text: '{}' } });
    const text = await send('/json', [Buffer.from('hi')], {
      'content-type': 'text/plain',
      'content-length': '2',
    });
    assert.deepEqual(text, { status: 200, body: { buffer: false, text: null } });
  });
});
