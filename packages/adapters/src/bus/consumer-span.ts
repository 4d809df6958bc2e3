import {
  contextOfCarrier,
  errorClass,
  failSpan,
  runInContext,
  SpanKind,
  startSpan,
  tracingEnabled,
  type Attributes,
  type Context,
} from '@switchyard/core';
import type { BusMessage } from './event-bus.ts';

/** How a subscription hands events over: one at a time, or in batches (see EventBus). */
export type Delivery = 'message' | 'batch';

/**
 * Runs a consumer's handling of messages (of one topic and partition) in a consumer span that
 * follows the OpenTelemetry messaging conventions, while tracing is on; otherwise just runs it.
 * The rule for its place in traces:
 * - a subscription that handles events one at a time: the span is the child of the event's
 *   publisher context, so that it shows in the publisher's trace (a root span when the event
 *   came without one);
 * - a batch subscription: the span begins a trace of its own, linked to each event's publisher
 *   context. Also for a batch of one, so that where the span is does not depend on load.
 * Spans the handler starts, and log lines it writes, belong to the consumer span. A handler
 * that throws marks it failed; the bus's retry of the same messages gets a span of its own.
 */
export async function processInSpan(
  groupId: string,
  delivery: Delivery,
  messages: readonly BusMessage[],
  handle: () => Promise<void>,
): Promise<void> {
  if (!tracingEnabled() || messages.length === 0) return handle();
  const first = messages[0]!;
  const attributes: Attributes = {
    'messaging.system': 'kafka',
    'messaging.destination.name': first.topic,
    'messaging.operation.type': 'process',
    'messaging.operation.name': 'process',
    'messaging.consumer.group.name': groupId,
    'messaging.destination.partition.id': String(first.partition),
  };
  let started;
  if (delivery === 'message') {
    attributes['messaging.kafka.offset'] = Number(first.offset);
    started = startSpan(
      `process ${first.topic}`,
      SpanKind.CONSUMER,
      attributes,
      contextOfCarrier(first.traceContext),
    );
  } else {
    attributes['messaging.batch.message_count'] = messages.length;
    // Events published in one context (logs written in one request) link it once.
    const publishers = new Map<string, Context>();
    for (const { traceContext } of messages) {
      if (traceContext && !publishers.has(traceContext.traceparent)) {
        publishers.set(traceContext.traceparent, contextOfCarrier(traceContext));
      }
    }
    started = startSpan(
      `process ${first.topic}`,
      SpanKind.CONSUMER,
      attributes,
      contextOfCarrier(undefined),
      [...publishers.values()],
    );
  }
  const { span, context } = started;
  try {
    await runInContext(context, handle);
  } catch (err) {
    failSpan(span, errorClass(err));
    throw err;
  } finally {
    span.end();
  }
}
