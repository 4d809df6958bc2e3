import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { startFakeOpenAi, type FakeOpenAi } from '@switchyard/testing';
import { Child } from './children.ts';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const KEY = 'sk-reference-test';

function start(upstreamUrl: string): Child {
  return new Child('reference proxy', ['--import', 'tsx', 'bench/src/reference-proxy.ts'], {
    cwd: repoRoot,
    env: { ...process.env, BENCH_UPSTREAM_URL: upstreamUrl },
  });
}

async function urlOf(child: Child): Promise<string> {
  return (await child.waitForListening(30_000)).url;
}

function chat(url: string, body: object, key = KEY): Promise<Response> {
  return fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
}

describe('reference proxy (the benchmark yardstick)', () => {
  let upstream: FakeOpenAi;
  let proxy: Child;
  let url: string;

  before(async () => {
    upstream = await startFakeOpenAi({ apiKey: KEY });
    proxy = start(upstream.url);
    url = await urlOf(proxy);
  });

  after(async () => {
    await proxy.stop(5_000);
    await upstream.close();
  });

  it('listens on loopback only', () => {
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('forwards the request bytes unchanged and answers with the upstream’s answer', async () => {
    const body = {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Hello, yardstick' }],
      extra: 1,
    };
    const viaProxy = await chat(url, body);
    assert.equal(viaProxy.status, 200);
    assert.match(viaProxy.headers.get('content-type') ?? '', /application\/json/);
    const answer = (await viaProxy.json()) as {
      object: string;
      choices: Array<{ message: { content: string } }>;
    };
    assert.equal(answer.object, 'chat.completion');
    assert.equal(answer.choices[0]!.message.content, 'Echo: Hello, yardstick');
    const seen = upstream.requests.at(-1)!;
    assert.equal(seen.body, JSON.stringify(body));
    assert.equal(seen.headers.authorization, `Bearer ${KEY}`);
  });

  it('relays a stream event by event, to the end', async () => {
    const res = await chat(url, {
      model: 'gpt-4o-mini',
      stream: true,
      messages: [{ role: 'user', content: 'Hi' }],
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /text\/event-stream/);
    const text = await res.text();
    assert.match(text, /"object":"chat\.completion\.chunk"/);
    assert.match(text, /data: \[DONE\]\n\n$/);
  });

  it('passes the upstream’s error status and body on', async () => {
    const res = await chat(url, { model: 'error-429', messages: [{ role: 'user', content: 'Hi' }] });
    assert.equal(res.status, 429);
    const body = (await res.json()) as { error: { message: string } };
    assert.ok(body.error.message.length > 0);
    const refused = await chat(url, { model: 'gpt-4o-mini', messages: [] }, 'sk-wrong');
    assert.equal(refused.status, 401);
  });

  it('answers 502 when the upstream cannot be reached', async () => {
    const closed = await startFakeOpenAi();
    const gone = closed.url;
    await closed.close();
    const orphan = start(gone);
    try {
      const res = await chat(await urlOf(orphan), { model: 'gpt-4o-mini', messages: [] });
      assert.equal(res.status, 502);
    } finally {
      await orphan.stop(5_000);
    }
  });

  it('refuses an upstream that is not an http:// loopback URL', async () => {
    const refused = start('http://192.0.2.1:8080');
    await assert.rejects(urlOf(refused), /exited|loopback/);
    await refused.stop(5_000);
  });
});
