import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { flushTraces } from '@switchyard/core';
import {
  eventually,
  startFakeOpenAi,
  startOtlpReceiver,
  startServiceHarness,
  type FakeOpenAi,
  type OtlpReceiver,
  type ReceivedSpan,
  type ServiceHarness,
} from '@switchyard/testing';
import { everyService } from '../testing/services.ts';

const upstreamKey = 'sk-tracing-upstream-0123456789';
let receiver: OtlpReceiver;
let fake: FakeOpenAi;
let h: ServiceHarness;
let client: OpenAI;

before(async () => {
  receiver = await startOtlpReceiver();
  fake = await startFakeOpenAi({ apiKey: upstreamKey });
  h = await startServiceHarness({
    services: everyService,
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
  });
  const res = await h.request('POST', '/admin/v2/integrations', {
    key: h.adminKey,
    json: {
      name: 'traced',
      slug: 'traced',
      ai_provider_id: 'openai',
      key: upstreamKey,
      configurations: { custom_host: fake.baseUrl },
    },
  });
  assert.equal(res.status, 200, res.text);
  client = new OpenAI({ apiKey: h.workspaceKey, baseURL: `${h.url}/v1`, maxRetries: 0 });
});
after(async () => {
  await h?.close();
  await fake?.close();
  await receiver?.close();
});

const hello = [{ role: 'user' as const, content: 'Hello there' }];

/** A caller's trace context: a fresh trace id and span id, sampled. */
function callerTrace() {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

/** The spans of a trace once `found` holds among them, exporting what has ended meanwhile. */
function spansOf(traceId: string, found: (spans: ReceivedSpan[]) => boolean): Promise<ReceivedSpan[]> {
  return eventually(
    async () => {
      await flushTraces();
      const spans = receiver.spans.filter((span) => span.traceId === traceId);
      return found(spans) ? spans : undefined;
    },
    { what: `the spans of trace ${traceId}` },
  );
}

const SERVER = 2;
const CLIENT = 3;
const CONSUMER = 5;
const isModelSpan = (span: ReceivedSpan) => span.name === 'chat gpt-4o-mini';
const isChatServerSpan = (span: ReceivedSpan) => span.name === 'POST /v1/chat/completions';

/** The request's log once log-export has stored it. */
function logOf(requestId: string) {
  return eventually(
    async () => {
      const found = await h.request('GET', `/v1/logs/${requestId}`, { key: h.workspaceKey });
      return found.status === 200 ? found.body : undefined;
    },
    { what: `log ${requestId}` },
  );
}

describe('traces of a chat completion, with tracing on', () => {
  test('the caller trace holds the server span, the model span and the calls between services; the provider and the log know it', async () => {
    const caller = callerTrace();
    const { data, response } = await client.chat.completions
      .create(
        { model: '@traced/gpt-4o-mini', messages: hello, max_tokens: 50, temperature: 0.5 },
        { headers: { traceparent: caller.traceparent } },
      )
      .withResponse();
    assert.equal(data.choices[0]!.message.content, 'Echo: Hello there');
    const requestId = response.headers.get('x-request-id')!;

    const spans = await spansOf(caller.traceId, (s) => s.some(isModelSpan) && s.some(isChatServerSpan));
    const server = spans.find(isChatServerSpan)!;
    assert.equal(server.kind, SERVER);
    assert.equal(server.parentSpanId, caller.spanId, 'the server span continues the caller span');
    assert.equal(server.serviceName, 'switchyard-harness');
    assert.equal(server.attributes['http.request.method'], 'POST');
    assert.equal(server.attributes['http.route'], '/v1/chat/completions');
    assert.equal(server.attributes['http.response.status_code'], 200);
    assert.equal(server.attributes['switchyard.request_id'], requestId);

    const model = spans.find(isModelSpan)!;
    assert.equal(model.kind, CLIENT);
    assert.equal(model.parentSpanId, server.spanId, 'the model span is a child of the server span');
    assert.deepEqual(
      {
        operation: model.attributes['gen_ai.operation.name'],
        provider: model.attributes['gen_ai.provider.name'],
        requestModel: model.attributes['gen_ai.request.model'],
        responseModel: model.attributes['gen_ai.response.model'],
        maxTokens: model.attributes['gen_ai.request.max_tokens'],
        temperature: model.attributes['gen_ai.request.temperature'],
        inputTokens: model.attributes['gen_ai.usage.input_tokens'],
        outputTokens: model.attributes['gen_ai.usage.output_tokens'],
        finishReasons: model.attributes['gen_ai.response.finish_reasons'],
        responseId: model.attributes['gen_ai.response.id'],
      },
      {
        operation: 'chat',
        provider: 'openai',
        requestModel: 'gpt-4o-mini',
        responseModel: 'gpt-4o-mini',
        maxTokens: 50,
        temperature: 0.5,
        inputTokens: data.usage!.prompt_tokens,
        outputTokens: data.usage!.completion_tokens,
        finishReasons: ['stop'],
        responseId: data.id,
      },
    );
    assert.equal(data.usage!.prompt_tokens, 9);

    // The provider was told the trace, with the model span as the parent of what it does.
    const upstream = fake.requests.at(-1)!;
    assert.equal(upstream.headers.traceparent, `00-${caller.traceId}-${model.spanId}-01`);

    // The gateway's calls to other services are in the same trace, each side a span.
    const grpcServer = spans.find((s) => s.kind === SERVER && s.attributes['rpc.system'] === 'grpc');
    assert.ok(grpcServer, `a gRPC server span in the trace: ${spans.map((s) => s.name).join(', ')}`);
    const grpcClient = spans.find((s) => s.spanId === grpcServer.parentSpanId);
    assert.ok(grpcClient, 'the gRPC server span continues the calling side');
    assert.equal(grpcClient.kind, CLIENT);
    assert.equal(grpcClient.name, grpcServer.name);
    assert.equal(grpcServer.attributes['switchyard.caller'], 'gateway');

    const log = await logOf(requestId);
    assert.equal(log.w3c_trace_id, caller.traceId);
  });

  test("log-export stores the request's log in a consumer span linked to the request's span", async () => {
    const caller = callerTrace();
    const { response } = await client.chat.completions
      .create(
        { model: '@traced/gpt-4o-mini', messages: hello },
        { headers: { traceparent: caller.traceparent } },
      )
      .withResponse();
    const requestId = response.headers.get('x-request-id')!;
    await logOf(requestId);

    const linksToCaller = (span: ReceivedSpan) => span.links.some((link) => link.traceId === caller.traceId);
    const consumer = await eventually(
      async () => {
        await flushTraces();
        const found = receiver.spans.find((span) => span.kind === CONSUMER && linksToCaller(span));
        assert.ok(found, 'a consumer span linked to the request trace');
        return found;
      },
      { what: `the consumer span of log ${requestId}` },
    );
    assert.equal(consumer.name, 'process switchyard.request-logs.v1');
    assert.equal(consumer.attributes['messaging.system'], 'kafka');
    assert.equal(consumer.attributes['messaging.destination.name'], 'switchyard.request-logs.v1');
    assert.equal(consumer.attributes['messaging.operation.type'], 'process');
    assert.equal(consumer.attributes['messaging.consumer.group.name'], 'log-export.request-logs');
    assert.ok(Number(consumer.attributes['messaging.batch.message_count']) >= 1);
    const server = (await spansOf(caller.traceId, (s) => s.some(isChatServerSpan))).find(isChatServerSpan)!;
    const link = consumer.links.find((l) => l.traceId === caller.traceId)!;
    assert.equal(link.spanId, server.spanId, "the link names the request's server span");
  });

  test('a streamed completion: the model span ends with the stream, carrying its usage', async () => {
    const caller = callerTrace();
    const stream = await client.chat.completions.create(
      {
        model: '@traced/gpt-4o-mini',
        messages: hello,
        stream: true,
        stream_options: { include_usage: true },
      },
      { headers: { traceparent: caller.traceparent } },
    );
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      usage = chunk.usage ?? usage;
    }
    assert.equal(text, 'Echo: Hello there');
    const spans = await spansOf(caller.traceId, (s) => s.some(isModelSpan));
    const model = spans.find(isModelSpan)!;
    assert.equal(model.attributes['gen_ai.request.stream'], true);
    assert.equal(model.attributes['gen_ai.usage.input_tokens'], usage!.prompt_tokens);
    assert.equal(model.attributes['gen_ai.usage.output_tokens'], usage!.completion_tokens);
    assert.deepEqual(model.attributes['gen_ai.response.finish_reasons'], ['stop']);
    assert.equal(model.statusCode, 0);
  });

  test('a provider error: the model span records the failure; without a traceparent the gateway begins the trace', async () => {
    const res = await h.request('POST', '/v1/chat/completions', {
      key: h.workspaceKey,
      json: { model: '@traced/error-429', messages: hello },
    });
    assert.equal(res.status, 429, res.text);
    const upstream = fake.requests.at(-1)!;
    const traceparent = String(upstream.headers.traceparent);
    const [, traceId, parentId] = traceparent.split('-');
    assert.match(traceparent, /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const spans = await spansOf(traceId!, (s) => s.some((span) => span.spanId === parentId));
    const model = spans.find((span) => span.spanId === parentId)!;
    assert.equal(model.name, 'chat error-429');
    assert.equal(model.statusCode, 2);
    assert.equal(model.attributes['error.type'], '429');
    const server = spans.find((span) => span.spanId === model.parentSpanId)!;
    assert.equal(server.parentSpanId, '', 'the server span is the root of a trace it began');
    assert.equal(server.attributes['http.response.status_code'], 429);
    const log = await logOf(res.headers.get('x-request-id')!);
    assert.equal(log.w3c_trace_id, traceId);
  });
});
