import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { providerRegistry } from '@switchyard/rules';
import { adminService } from '@switchyard/admin';
import { controlPlane } from '@switchyard/control-plane';
import { policyService } from '@switchyard/policy';
import { FAKE_STRUCTURED_ANSWER, startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { gatewayService } from '../service.ts';
import {
  NO_UPSTREAM,
  authKindOf,
  eventData,
  familyFakes,
  type FamilyFake,
  type RunningFake,
} from './conformance-kit.ts';

// The adapter conformance kit: the same cases for every registered provider, sent through the
// gateway as a client sends them, to an integration whose custom_host is its family's fake
// upstream (conformance-kit.ts). What differs between providers on the wire is tested beside
// each adapter; here, what every client may count on whatever the provider.

const covered = providerRegistry.flatMap((provider) => {
  const fake = familyFakes[provider.family];
  return fake === NO_UPSTREAM ? [] : [{ provider, fake }];
});

let h: ServiceHarness;
const running = new Map<FamilyFake, RunningFake>();
const hello = [{ role: 'user', content: 'Hello there' }];
const tools = [
  { type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } },
  { type: 'function', function: { name: 'get_time', parameters: { type: 'object' } } },
];

before(async () => {
  h = await startServiceHarness({ services: [controlPlane, policyService, adminService, gatewayService] });
  for (const { provider, fake } of covered) {
    if (!running.has(fake)) running.set(fake, await fake.start());
    const upstream = running.get(fake)!;
    const res = await h.request('POST', '/admin/v2/integrations', {
      key: h.adminKey,
      json: {
        name: provider.id,
        slug: `conformance-${provider.id}`,
        ai_provider_id: provider.id,
        ...(upstream.key === undefined ? {} : { key: upstream.key }),
        configurations: upstream.configurations,
      },
    });
    assert.equal(res.status, 200, `${provider.id}: ${res.text}`);
  }
});
after(async () => {
  await h?.close();
  for (const fake of running.values()) await fake.close();
});

for (const { provider, fake } of covered) {
  const chat = (model: string, body: Record<string, unknown> = {}) =>
    h.request('POST', '/v1/chat/completions', {
      key: h.workspaceKey,
      json: { messages: hello, ...body, model: `@conformance-${provider.id}/${model}` },
    });

  describe(`${provider.id} (${provider.family}) through the gateway, as every provider must`, () => {
    test('a whole answer in the OpenAI shape, sent upstream with the integration’s credential', async () => {
      const res = await chat(fake.models.answer);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.headers.get('x-vendor-provider'), provider.id);
      assert.equal(res.body.object, 'chat.completion');
      assert.equal(res.body.choices.length, 1);
      const [choice] = res.body.choices;
      assert.equal(choice.message.role, 'assistant');
      assert.equal(choice.message.content, 'Echo: Hello there');
      assert.equal(choice.finish_reason, 'stop');
      const { prompt_tokens, completion_tokens, total_tokens } = res.body.usage;
      assert.ok(prompt_tokens > 0 && completion_tokens > 0, JSON.stringify(res.body.usage));
      assert.equal(total_tokens, prompt_tokens + completion_tokens);

      const upstream = running.get(fake)!.requests.at(-1)!;
      const kind = authKindOf(upstream.headers, running.get(fake)!.key);
      assert.ok(provider.authKinds.includes(kind), `sent with ${kind}, not one of ${provider.authKinds}`);
      assert.ok(!JSON.stringify(upstream.headers).includes(h.workspaceKey), 'the gateway key went upstream');
    });

    test('a streamed answer: OpenAI chunks whose text is the answer, ending in [DONE]', async () => {
      const res = await chat(fake.models.answer, { stream: true });
      assert.equal(res.status, 200, res.text);
      assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
      const data = eventData(res.text);
      assert.equal(data.at(-1), '[DONE]');
      const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
      const withChoices = chunks.filter((c) => c.choices.length > 0);
      assert.ok(withChoices.length > 0);
      for (const chunk of withChoices) assert.equal(chunk.object, 'chat.completion.chunk');
      assert.equal(withChoices.map((c) => c.choices[0].delta.content ?? '').join(''), 'Echo: Hello there');
      assert.deepEqual(withChoices.map((c) => c.choices[0].finish_reason).filter(Boolean), ['stop']);
    });

    test('a tool call: finish_reason tool_calls and the call with its JSON arguments', async () => {
      const res = await chat(fake.models.toolCall, { tools });
      assert.equal(res.status, 200, res.text);
      const [choice] = res.body.choices;
      assert.equal(choice.finish_reason, 'tool_calls');
      const [call] = choice.message.tool_calls;
      assert.equal(call.type, 'function');
      assert.ok(typeof call.id === 'string' && call.id.length > 0, call.id);
      assert.equal(call.function.name, 'get_weather');
      assert.deepEqual(JSON.parse(call.function.arguments), { city: 'Paris' });
    });

    test('structured output: a json_schema response_format is asked of the provider, and the answer follows it', async () => {
      const res = await chat(fake.models.answer, {
        response_format: {
          type: 'json_schema',
          json_schema: {
            name: 'weather',
            strict: true,
            schema: {
              type: 'object',
              properties: { city: { type: 'string' }, temperature_c: { type: 'integer' } },
              required: ['city', 'temperature_c'],
              additionalProperties: false,
            },
          },
        },
      });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(JSON.parse(res.body.choices[0].message.content), FAKE_STRUCTURED_ANSWER);
      assert.equal(res.body.choices[0].finish_reason, 'stop');
    });

    test('an upstream error keeps its status, in the one error shape, naming the provider', async () => {
      const res = await chat(fake.models.error);
      assert.equal(res.status, fake.errorStatus, res.text);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      assert.deepEqual(Object.keys(res.body), ['error']);
      assert.deepEqual(Object.keys(res.body.error).sort(), ['code', 'message', 'param', 'type']);
      assert.equal(res.body.error.type, 'upstream_error');
      assert.ok(res.body.error.message.startsWith(`${provider.id} error: `), res.body.error.message);
      assert.ok(typeof res.body.error.code === 'string' && res.body.error.code.length > 0);
    });

    test('a 429 reaches the client as a 429 with the upstream’s retry-after and message', async () => {
      const res = await chat(fake.models.rateLimited);
      assert.equal(res.status, 429, res.text);
      assert.equal(res.headers.get('retry-after'), fake.rateLimited.retryAfter);
      assert.equal(res.body.error.type, 'upstream_error');
      assert.equal(res.body.error.message, `${provider.id} error: ${fake.rateLimited.message}`);
    });
  });
}
