import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { events } from '@switchyard/proto';
import {
  activeTraceCarrier,
  flushTraces,
  runInContext,
  SpanKind,
  startSpan,
  startTracing,
  tracingConfigFrom,
  type Tracing,
} from '@switchyard/core';
import {
  captureLogger,
  eventually,
  startOtlpReceiver,
  type OtlpReceiver,
  type ReceivedSpan,
} from '@switchyard/core/testing';
import type { BusMessage } from './bus/event-bus.ts';
import { MemoryEventBus } from './bus/memory-bus.ts';
import { publishEvent, subscribeEventBatches, subscribeEvents, Topics } from './events.ts';

const CONSUMER = 5;

function usage(id: string) {
  return { id, apiKeyId: 'key-1', model: 'gpt-4o', occurredAtMs: '1763700000000' };
}

/** Publishes in a span of its own, as a request would; returns the span's ids. */
function publishInSpan(name: string, publish: () => void): { traceId: string; spanId: string } {
  const { span, context } = startSpan(name, SpanKind.SERVER, {});
  runInContext(context, publish);
  span.end();
  const { traceId, spanId } = span.spanContext();
  return { traceId, spanId };
}

describe('with tracing off', () => {
  test('publishing captures no trace context, and subscribers get none', async (t) => {
    assert.equal(activeTraceCarrier(), undefined);
    const bus = new MemoryEventBus();
    t.after(() => bus.close());
    const seen: BusMessage[] = [];
    await subscribeEvents(bus, captureLogger().logger, {
      groupId: 'untraced',
      topic: Topics.usage,
      schema: events.UsageEventSchema,
      handler: async (_event, message) => void seen.push(message),
    });
    publishEvent(bus, Topics.usage, events.UsageEventSchema, 'key-1', usage('u0'));
    await eventually(() => assert.equal(seen.length, 1));
    assert.equal(seen[0]!.traceContext, undefined);
  });
});

describe('with tracing on', () => {
  let receiver: OtlpReceiver;
  let tracing: Tracing;
  before(async () => {
    receiver = await startOtlpReceiver();
    tracing = await startTracing(
      tracingConfigFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: 'events-test' }),
      'events-test',
    );
  });
  after(async () => {
    await tracing?.shutdown();
    await receiver?.close();
  });

  /** The exported spans once `found` holds among them. */
  function spansOnce(found: (spans: ReceivedSpan[]) => boolean): Promise<ReceivedSpan[]> {
    return eventually(async () => {
      await flushTraces();
      assert.ok(found(receiver.spans), 'the spans looked for were exported');
      return receiver.spans;
    });
  }

  async function spanWhere(found: (span: ReceivedSpan) => boolean): Promise<ReceivedSpan> {
    return (await spansOnce((spans) => spans.some(found))).find(found)!;
  }

  test('an event handled on its own is handled in a consumer span, the child of the span it was published in', async (t) => {
    const bus = new MemoryEventBus();
    t.after(() => bus.close());
    const handledIn: Array<string | undefined> = [];
    await subscribeEvents(bus, captureLogger().logger, {
      groupId: 'policy.usage',
      topic: Topics.usage,
      schema: events.UsageEventSchema,
      handler: async () => void handledIn.push(activeTraceCarrier()?.traceparent),
    });
    const publisher = publishInSpan('POST /v1/chat/completions', () =>
      publishEvent(bus, Topics.usage, events.UsageEventSchema, 'key-1', usage('u1')),
    );
    const consumer = await spanWhere((s) => s.kind === CONSUMER && s.traceId === publisher.traceId);
    assert.equal(consumer.parentSpanId, publisher.spanId);
    assert.equal(consumer.name, `process ${Topics.usage}`);
    assert.equal(consumer.serviceName, 'events-test');
    assert.deepEqual(
      {
        system: consumer.attributes['messaging.system'],
        destination: consumer.attributes['messaging.destination.name'],
        operationType: consumer.attributes['messaging.operation.type'],
        group: consumer.attributes['messaging.consumer.group.name'],
        offset: consumer.attributes['messaging.kafka.offset'],
      },
      {
        system: 'kafka',
        destination: Topics.usage,
        operationType: 'process',
        group: 'policy.usage',
        offset: 0,
      },
    );
    assert.match(
      handledIn[0] ?? '',
      new RegExp(`^00-${consumer.traceId}-${consumer.spanId}-01$`),
      'the handler runs in it',
    );
  });

  test("a batch is handled in one consumer span of its own trace, linked to each event's publisher", async (t) => {
    const bus = new MemoryEventBus();
    t.after(() => bus.close());
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let handling = false;
    const batches: number[] = [];
    await subscribeEventBatches(bus, captureLogger().logger, {
      groupId: 'log-export.request-logs',
      topic: Topics.requestLogs,
      schema: events.RequestLogEventSchema,
      maxEvents: 10,
      handler: async (batch) => {
        handling = true;
        await gate;
        batches.push(batch.length);
      },
    });
    const log = (id: string) =>
      publishEvent(bus, Topics.requestLogs, events.RequestLogEventSchema, 'ws-1', {
        id,
        workspaceId: 'ws-1',
      });
    // The first event is handled on its own while the others wait behind it, then in one batch.
    log('first');
    await eventually(() => assert.ok(handling));
    const a = publishInSpan('request a', () => {
      log('a1');
      log('a2');
    });
    const b = publishInSpan('request b', () => log('b1'));
    log('untraced');
    release();
    await eventually(() => assert.deepEqual(batches, [1, 4]));

    const batch = await spanWhere(
      (s) => s.kind === CONSUMER && s.attributes['messaging.batch.message_count'] === 4,
    );
    assert.equal(batch.parentSpanId, '', 'a batch span begins a trace of its own');
    assert.notEqual(batch.traceId, a.traceId);
    assert.deepEqual(
      new Set(batch.links.map((l) => `${l.traceId}/${l.spanId}`)),
      new Set([`${a.traceId}/${a.spanId}`, `${b.traceId}/${b.spanId}`]),
      "linked once to each publisher's span",
    );
    assert.equal(batch.attributes['messaging.destination.name'], Topics.requestLogs);
    assert.equal(batch.attributes['messaging.operation.type'], 'process');
  });

  test('a handler that fails marks its span failed, and the retry is handled in a span of its own', async (t) => {
    const bus = new MemoryEventBus();
    t.after(() => bus.close());
    let attempts = 0;
    await subscribeEvents(bus, captureLogger().logger, {
      groupId: 'log-export.audit',
      topic: Topics.audit,
      schema: events.AuditEventSchema,
      handler: async () => {
        if (++attempts === 1) throw new RangeError('the store is away');
      },
    });
    const publisher = publishInSpan('PUT /v2/configs', () =>
      publishEvent(bus, Topics.audit, events.AuditEventSchema, 'org-1', { id: 'audit-1' }),
    );
    await eventually(() => assert.equal(attempts, 2));
    const ofPublisher = (spans: ReceivedSpan[]) =>
      spans.filter((s) => s.kind === CONSUMER && s.traceId === publisher.traceId);
    const spans = ofPublisher(await spansOnce((all) => ofPublisher(all).length === 2));
    assert.deepEqual(
      spans.map((s) => ({
        status: s.statusCode,
        errorType: s.attributes['error.type'],
        parent: s.parentSpanId,
      })),
      [
        { status: 2, errorType: 'RangeError', parent: publisher.spanId },
        { status: 0, errorType: undefined, parent: publisher.spanId },
      ],
    );
  });
});
