import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { Topics, publishEvent } from '@switchyard/adapters';
import { events } from '@switchyard/proto';
import { startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { policyService } from '../service.ts';

let h: ServiceHarness;

before(async () => {
  h = await startServiceHarness({ services: [policyService] });
});
after(() => h.close());

const occurredAtMs = Date.UTC(2026, 2, 14, 12, 30);
const day = '2026-03-14';

function usageEvent(apiKeyId: string, totalTokens: number, id = randomUUID()) {
  return {
    id,
    organisationId: randomUUID(),
    workspaceId: randomUUID(),
    apiKeyId,
    provider: 'openai',
    model: 'gpt-4o-mini',
    usage: { promptTokens: totalTokens, completionTokens: 0, totalTokens },
    occurredAtMs: String(occurredAtMs),
  };
}

function publish(event: ReturnType<typeof usageEvent>) {
  publishEvent(h.bus, Topics.usage, events.UsageEventSchema, event.apiKeyId, event);
}

async function counters(apiKeyId: string) {
  await h.bus.flush();
  return {
    requests: await h.kv.get(`usage:${apiKeyId}:${day}:requests`),
    tokens: await h.kv.get(`usage:${apiKeyId}:${day}:tokens`),
  };
}

test('counts a usage event once even when it is delivered twice', async () => {
  const apiKeyId = randomUUID();
  const event = usageEvent(apiKeyId, 42);
  publish(event);
  publish(event);
  assert.deepEqual(await counters(apiKeyId), { requests: '1', tokens: '42' });

  publish(event);
  assert.deepEqual(await counters(apiKeyId), { requests: '1', tokens: '42' });
});

test('adds up distinct events of the same key per day', async () => {
  const apiKeyId = randomUUID();
  publish(usageEvent(apiKeyId, 10));
  publish(usageEvent(apiKeyId, 15));
  publish(usageEvent(apiKeyId, 0));
  assert.deepEqual(await counters(apiKeyId), { requests: '3', tokens: '25' });
});

test('keeps each key’s counters apart', async () => {
  const first = randomUUID();
  const second = randomUUID();
  publish(usageEvent(first, 7));
  publish(usageEvent(second, 9));
  assert.deepEqual(await counters(first), { requests: '1', tokens: '7' });
  assert.deepEqual(await counters(second), { requests: '1', tokens: '9' });
});

test('skips an undecodable message and counts the events after it', async () => {
  const apiKeyId = randomUUID();
  h.bus.publish({ topic: Topics.usage, key: apiKeyId, value: Uint8Array.from([0xff, 0xff, 0xff, 0xff]) });
  publish(usageEvent(apiKeyId, 3));
  assert.deepEqual(await counters(apiKeyId), { requests: '1', tokens: '3' });
});
