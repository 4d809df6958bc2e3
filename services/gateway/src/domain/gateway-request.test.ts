import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { fromBinary } from '@bufbuild/protobuf';
import { Topics, type EventBus, type OutgoingMessage } from '@switchyard/adapters';
import { InternalError } from '@switchyard/core';
import { events } from '@switchyard/proto';
import { GatewayRequest, type GatewayContext } from './gateway-request.ts';

/** A request whose published events are kept in `sent`. */
function openRequest() {
  const sent: OutgoingMessage[] = [];
  const bus = { publish: (m: OutgoingMessage) => sent.push(m) } as unknown as EventBus;
  const request = new GatewayRequest({ bus, headerPrefix: 'x-vendor-' } as unknown as GatewayContext, {
    principal: { organisationId: 'org', workspaceId: 'ws', apiKeyId: 'key' } as never,
    headers: { traceId: 'trace-1', metadata: {} } as never,
    providerKey: undefined,
    requestId: 'req-1',
    method: 'POST',
    path: '/v1/chat/completions',
  });
  /** The request log event, once published. */
  const published = async () => {
    await new Promise((resolve) => setImmediate(resolve));
    const log = sent.find((m) => m.topic === Topics.requestLogs);
    assert.ok(log, 'no request log was published');
    return fromBinary(events.RequestLogEventSchema, log.value);
  };
  return { request, published };
}

describe('GatewayRequest and a client that goes away', () => {
  test('a failure after the client left is recorded as 499 client closed request, and not thrown on', async () => {
    const { request, published } = openRequest();
    assert.equal(request.clientClosed(), true);
    assert.equal(request.abort.aborted, true, 'the request is cancelled');
    request.fail(new DOMException('This operation was aborted', 'AbortError'), '{"model":"m"}');
    const log = await published();
    assert.equal(log.status, 499);
    assert.equal(log.errorMessage, 'client closed request');
    assert.equal(log.responseBody, '');
  });

  test('a failure while the client is there is thrown on, for the error handling to answer', async () => {
    const { request, published } = openRequest();
    const failure = new InternalError('Internal error.');
    assert.throws(() => request.fail(failure, ''), failure);
    const log = await published();
    assert.equal(log.status, 500);
    assert.equal(log.errorMessage, 'Internal error.');
  });

  test('an answer the client left before it was sent in full is recorded as 499', async () => {
    const { request, published } = openRequest();
    request.clientClosed();
    request.finish(200, '', 'data: {"choices":[]}\n\n');
    const log = await published();
    assert.equal(log.status, 499);
    assert.equal(log.errorMessage, 'client closed request');
  });

  test('a connection closed after the outcome was recorded leaves the record as it was', async () => {
    const { request, published } = openRequest();
    request.finish(200, '', '{}');
    assert.equal(request.clientClosed(), false);
    const log = await published();
    assert.equal(log.status, 200);
    assert.equal(log.errorMessage, '');
  });
});
