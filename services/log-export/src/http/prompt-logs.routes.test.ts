// Saved prompts on the request log: the prompt and version a prompt completion ran, stored with
// the log, shown by id and in lists, and found by prompt (id or slug).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { Topics, publishEvent } from '@switchyard/adapters';
import { events } from '@switchyard/proto';
import { controlPlane } from '@switchyard/control-plane';
import { startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { logExportService } from '../service.ts';

type RequestLogInit = MessageInitShape<typeof events.RequestLogEventSchema>;

let h: ServiceHarness;
before(async () => {
  h = await startServiceHarness({ services: [controlPlane, logExportService] });
});
after(() => h.close());

const START = Date.UTC(2026, 4, 3, 9, 0, 0);
const RANGE = `start_time=${new Date(START).toISOString()}&end_time=${new Date(START + 3_600_000).toISOString()}`;
const GREETING_ID = '0b7c3a4e-7d55-4d1e-9a3f-2f1e6c9b8a01';
const SUMMARY_ID = '5a2e9c10-3b4f-4e8a-8c6d-7f0a1b2c3d4e';

function logOf(minute: number, prompt?: { id: string; slug: string; version: number }) {
  return {
    id: randomUUID(),
    organisationId: h.organisationId,
    workspaceId: h.workspaceId,
    apiKeyId: randomUUID(),
    method: 'POST',
    path: prompt ? `/v1/prompts/${prompt.slug}/completions` : '/v1/chat/completions',
    provider: 'openai',
    model: 'gpt-4o-mini',
    status: 200,
    latencyMs: 120,
    createdAtMs: String(START + minute * 60_000),
    requestBody: '{}',
    responseBody: '{}',
    ...(prompt
      ? {
          prompt: {
            promptId: prompt.id,
            promptSlug: prompt.slug,
            versionId: `${prompt.slug}-v${prompt.version}`,
            versionNumber: prompt.version,
          },
        }
      : {}),
  } as RequestLogInit & { id: string };
}

const fixtures = () => ({
  greetingV1: logOf(1, { id: GREETING_ID, slug: 'greeting', version: 1 }),
  greetingV2: logOf(2, { id: GREETING_ID, slug: 'greeting', version: 2 }),
  summary: logOf(3, { id: SUMMARY_ID, slug: 'summary', version: 4 }),
  chat: logOf(4),
});
let logs: ReturnType<typeof fixtures>;

async function ids(query: string): Promise<string[]> {
  const res = await h.request('GET', `/v1/logs?${RANGE}&${query}`, { key: h.workspaceKey });
  assert.equal(res.status, 200, res.text);
  return (res.body.data as Array<{ id: string }>).map((log) => log.id).sort();
}

const sorted = (...picked: Array<{ id: string }>) => picked.map((log) => log.id).sort();

describe('saved prompts on the request log', () => {
  before(async () => {
    logs = fixtures();
    for (const log of Object.values(logs)) {
      publishEvent(h.bus, Topics.requestLogs, events.RequestLogEventSchema, h.workspaceId, log);
    }
    await h.bus.flush();
  });

  test('a prompt completion is shown by id with its prompt and version; any other request has none', async () => {
    const res = await h.request('GET', `/v1/logs/${logs.greetingV2.id}`, { key: h.workspaceKey });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.prompt, {
      prompt_id: GREETING_ID,
      prompt_slug: 'greeting',
      version_id: 'greeting-v2',
      version_number: 2,
    });
    const chat = await h.request('GET', `/v1/logs/${logs.chat.id}`, { key: h.workspaceKey });
    assert.equal(chat.status, 200, chat.text);
    assert.equal(chat.body.prompt, null);
  });

  test('a list shows the prompt of each log', async () => {
    const res = await h.request('GET', `/v1/logs?${RANGE}`, { key: h.workspaceKey });
    assert.equal(res.status, 200, res.text);
    const byId = new Map(
      (res.body.data as Array<{ id: string; prompt: unknown }>).map((log) => [log.id, log.prompt]),
    );
    assert.equal(byId.size, 4);
    assert.equal(byId.get(logs.chat.id), null);
    assert.deepEqual(byId.get(logs.summary.id), {
      prompt_id: SUMMARY_ID,
      prompt_slug: 'summary',
      version_id: 'summary-v4',
      version_number: 4,
    });
  });

  test('search narrows by prompt id or slug, alternatives comma-separated', async () => {
    assert.deepEqual(await ids(`prompt_id=${GREETING_ID}`), sorted(logs.greetingV1, logs.greetingV2));
    assert.deepEqual(await ids('prompt_id=summary'), sorted(logs.summary));
    assert.deepEqual(
      await ids(`prompt_id=summary,${GREETING_ID}`),
      sorted(logs.greetingV1, logs.greetingV2, logs.summary),
    );
    assert.deepEqual(
      await ids('prompt_id=greeting&model=gpt-4o-mini'),
      sorted(logs.greetingV1, logs.greetingV2),
    );
    assert.deepEqual(await ids('prompt_id=elsewhere'), []);
  });

  test('a bad prompt filter is a 400 naming it', async () => {
    for (const query of [
      'prompt_id=',
      `prompt_id=${'p'.repeat(300)}`,
      `prompt_id=${Array.from({ length: 21 }, (_, i) => `p${i}`).join(',')}`,
    ]) {
      const res = await h.request('GET', `/v1/logs?${RANGE}&${query}`, { key: h.workspaceKey });
      assert.equal(res.status, 400, `${query.slice(0, 40)}: ${res.text}`);
      assert.equal(res.body.error.param, 'prompt_id');
    }
  });
});
