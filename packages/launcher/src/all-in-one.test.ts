import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  eventually,
  runningAllInOnes,
  startAllInOneProcess as startAllInOne,
  startFakeOpenAi,
  type AllInOneProcess as Running,
  type FakeOpenAi,
} from '@switchyard/testing';

async function call(url: string, method: string, path: string, key: string, body?: unknown, headers = {}) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : undefined };
}

const hello = { model: 'mock-1', messages: [{ role: 'user', content: 'Hello, Switchyard' }] };

async function expectCleanStop(app: Running) {
  const { code, signal, ms } = await app.stop();
  assert.equal(signal, null);
  assert.equal(code, 0);
  assert.ok(ms < 5_000, `took ${Math.round(ms)} ms to stop`);
}

let fake: FakeOpenAi;
const dataDirs: string[] = [];
const upstreamKey = 'sk-upstream-key-for-all-in-one-0000';

function freshDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-all-in-one-'));
  dataDirs.push(dir);
  return dir;
}

before(async () => {
  fake = await startFakeOpenAi({ apiKey: upstreamKey });
});
after(async () => {
  for (const child of runningAllInOnes) child.kill('SIGKILL');
  await fake.close();
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

describe('all-in-one', { timeout: 240_000 }, () => {
  test('serves a first request with the printed key and keeps its state across a restart', async () => {
    const dataDir = freshDataDir();
    // The fake upstream of the saved integration below listens on loopback.
    const trusted = { TRUSTED_CUSTOM_HOSTS: '127.0.0.1' };
    const first = await startAllInOne(dataDir, trusted);
    const workspaceKey = first.required('workspace key');
    const adminKey = first.required('admin key');
    const organisationId = first.required('organisation');
    assert.match(workspaceKey, /^sy-/);
    assert.match(adminKey, /^sy-/);
    assert.ok(first.banner.includes(`-H 'Authorization: Bearer ${workspaceKey}'`));

    // The printed request, as printed: the saved @mock integration, no inline provider choice.
    assert.ok(first.banner.includes(`"model":"@mock/mock-1"`));
    assert.ok(!first.banner.includes('x-vendor-provider'));
    const answer = await call(first.url, 'POST', '/v1/chat/completions', workspaceKey, {
      ...hello,
      model: '@mock/mock-1',
    });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.choices[0].message.content, 'Mock response to: Hello, Switchyard');
    const logId = answer.headers.get('x-request-id')!;
    await eventually(
      async () =>
        (await call(first.url, 'GET', `/v1/logs/${logId}`, workspaceKey)).status === 200 ? true : undefined,
      { what: 'the request log' },
    );
    const integration = await call(first.url, 'POST', '/admin/v2/integrations', adminKey, {
      name: 'Persisted',
      slug: 'persisted',
      ai_provider_id: 'openai',
      key: upstreamKey,
      configurations: { custom_host: fake.baseUrl },
    });
    assert.equal(integration.status, 200, integration.text);
    await expectCleanStop(first);

    const second = await startAllInOne(dataDir, trusted);
    assert.equal(second.field('workspace key'), undefined, 'keys are shown only once');
    assert.match(second.banner, /Keys were printed when this data folder was first started/);
    assert.equal(second.field('organisation'), organisationId);

    // Organisations created today block inline provider choices: the saved @mock integration answers.
    const again = await call(second.url, 'POST', '/v1/chat/completions', workspaceKey, {
      ...hello,
      model: '@mock/mock-1',
    });
    assert.equal(again.status, 200, again.text);
    const earlier = await call(second.url, 'GET', `/v1/logs/${logId}`, workspaceKey);
    assert.equal(earlier.status, 200, earlier.text);
    assert.equal(earlier.body.id, logId);
    assert.equal((await call(second.url, 'GET', '/v2/workspaces', adminKey)).status, 200);

    // The integration's key was encrypted with a key kept in the data folder: it still decrypts.
    const upstream = await call(second.url, 'POST', '/v1/chat/completions', workspaceKey, {
      ...hello,
      model: '@persisted/gpt-x',
    });
    assert.equal(upstream.status, 200, upstream.text);
    assert.equal(fake.requests.at(-1)?.headers.authorization, `Bearer ${upstreamKey}`);
    await expectCleanStop(second);
  });

  test("serves the console at / after every service's routes: pages get the app, API paths the API's JSON", async () => {
    const consoleDir = freshDataDir();
    mkdirSync(join(consoleDir, 'assets'));
    writeFileSync(join(consoleDir, 'index.html'), '<!doctype html><div id="root"></div>');
    writeFileSync(join(consoleDir, 'assets', 'app-1a2b.js'), 'export {}');
    const app = await startAllInOne(freshDataDir(), { CONSOLE_DIR: consoleDir });
    try {
      assert.match(app.banner, new RegExp(`console: +${app.url}/ `));
      const html = { accept: 'text/html' };
      for (const path of ['/', '/logs', '/api-keys/new']) {
        const page = await fetch(`${app.url}${path}`, { headers: html });
        assert.equal(page.status, 200, path);
        assert.equal(await page.text(), '<!doctype html><div id="root"></div>', path);
        assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'self'/, path);
      }
      const asset = await fetch(`${app.url}/assets/app-1a2b.js`);
      assert.equal(asset.status, 200);
      assert.match(asset.headers.get('cache-control') ?? '', /immutable/);
      // The services' routes come first; a path of theirs never falls back to the app.
      for (const path of ['/v1/unknown', '/v1/logs/nothing', '/admin/v2/nothing', '/openapi.json']) {
        const res = await fetch(`${app.url}${path}`, { headers: html });
        assert.match(res.headers.get('content-type') ?? '', /^application\/json/, path);
        assert.ok(!(await res.text()).includes('id="root"'), path);
      }
      const key = app.required('workspace key');
      const models = await call(app.url, 'GET', '/v1/models', key, undefined, html);
      assert.equal(models.status, 200, models.text);
      const post = await fetch(`${app.url}/`, { method: 'POST', headers: html });
      assert.equal(post.status, 404);
      assert.equal(((await post.json()) as { error: { type: string } }).error.type, 'not_found_error');
    } finally {
      await expectCleanStop(app);
    }
  });

  test('answers 20 simultaneous writes to the same and to different resources right after starting', async () => {
    const app = await startAllInOne(freshDataDir());
    try {
      const adminKey = app.required('admin key');
      const writes: Array<[method: string, path: string, body: unknown, expected: number[]]> = [];
      for (let i = 0; i < 4; i++) {
        writes.push(
          ['POST', '/v2/workspaces', { name: `Simultaneous ${i}` }, [200]],
          [
            'POST',
            '/admin/v2/integrations',
            { name: 'Own', slug: `own-${i}`, ai_provider_id: 'openai', key: upstreamKey },
            [200],
          ],
          ['PUT', '/v1/admin/organisation/settings', { block_inline_config: i % 2 === 0 }, [200]],
          ['POST', '/v1/admin/organisation/scim-token', {}, [200, 409]],
          ['DELETE', '/admin/v2/integrations/mock', undefined, [200, 404]],
        );
      }
      let timer: NodeJS.Timeout | undefined;
      const noAnswer = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error('some of 20 simultaneous writes got no answer in 30 s')),
          30_000,
        );
      });
      const answers = await Promise.race([
        Promise.all(writes.map(([method, path, body]) => call(app.url, method, path, adminKey, body))),
        noAnswer,
      ]).finally(() => clearTimeout(timer));
      answers.forEach((answer, i) => {
        const [method, path, , expected] = writes[i]!;
        assert.ok(expected.includes(answer.status), `${method} ${path}: ${answer.status} ${answer.text}`);
      });
      const statusesOf = (path: string, method: string) =>
        answers.filter((_, i) => writes[i]![0] === method && writes[i]![1] === path).map((a) => a.status);
      assert.deepEqual(statusesOf('/v1/admin/organisation/scim-token', 'POST').sort(), [200, 409, 409, 409]);
      assert.deepEqual(statusesOf('/admin/v2/integrations/mock', 'DELETE').sort(), [200, 404, 404, 404]);
    } finally {
      await expectCleanStop(app);
    }
  });

  test('a kill -9 right after the last answer loses no audit entry and no request log: both are there after a restart', async () => {
    const dataDir = freshDataDir();
    const first = await startAllInOne(dataDir);
    const workspaceKey = first.required('workspace key');
    const adminKey = first.required('admin key');
    const chat = () =>
      call(first.url, 'POST', '/v1/chat/completions', workspaceKey, { ...hello, model: '@mock/mock-1' });
    // The first call warms the gateway's caches, so that the second answers ahead of the writes.
    const answers = [await chat()];
    // A burst, so that the consumers are still behind when the process dies.
    const [answer, ...writes] = await Promise.all([
      chat(),
      ...Array.from({ length: 20 }, (_, i) =>
        call(first.url, 'POST', '/v2/workspaces', adminKey, { name: `Acknowledged ${i}` }),
      ),
    ]);
    answers.push(answer!);
    const exited = once(first.child, 'exit');
    first.child.kill('SIGKILL');
    await exited;
    for (const response of [...answers, ...writes]) assert.equal(response.status, 200, response.text);

    const second = await startAllInOne(dataDir);
    const acknowledged = writes.map((write) => write.headers.get('x-request-id')!);
    const stored = await eventually(
      async () => {
        const entries = await call(second.url, 'GET', '/v1/audit-logs?page_size=1000', adminKey);
        assert.equal(entries.status, 200, entries.text);
        const ids = (entries.body.data as Array<{ request_id: string }>).map((e) => e.request_id);
        return acknowledged.every((id) => ids.includes(id)) ? ids : undefined;
      },
      { what: 'the audit entry of every acknowledged write', timeoutMs: 10_000 },
    );
    // Events handled just before the kill may be delivered again: each is still stored once.
    for (const id of acknowledged) assert.equal(stored.filter((s) => s === id).length, 1, id);
    for (const logId of answers.map((a) => a.headers.get('x-request-id')!)) {
      await eventually(
        async () =>
          (await call(second.url, 'GET', `/v1/logs/${logId}`, workspaceKey)).status === 200
            ? true
            : undefined,
        { what: `the request log ${logId}` },
      );
    }
    const workspaces = await call(second.url, 'GET', '/v2/workspaces', adminKey);
    assert.equal(workspaces.body.total, 21, 'the default workspace and the twenty written');
    await expectCleanStop(second);
  });

  test('takes the admin key from SWITCHYARD_ADMIN_KEY and makes OPENAI_API_KEY the @openai integration', async () => {
    const adminKey = 'sy-admin-key-chosen-by-the-operator-01';
    const app = await startAllInOne(freshDataDir(), {
      SWITCHYARD_ADMIN_KEY: adminKey,
      OPENAI_API_KEY: upstreamKey,
      OPENAI_BASE_URL: fake.baseUrl,
    });
    try {
      assert.ok(!app.banner.includes(adminKey), 'the preset admin key was printed');
      assert.match(app.banner, /admin key:\s+the value of SWITCHYARD_ADMIN_KEY/);
      assert.match(app.banner, /Integrations created from the environment: @openai/);

      const workspaces = await call(app.url, 'GET', '/v2/workspaces', adminKey);
      assert.equal(workspaces.status, 200, workspaces.text);
      assert.equal(workspaces.body.total, 1);

      const workspaceKey = app.required('workspace key');
      const seen = fake.requests.length;
      const answer = await call(app.url, 'POST', '/v1/chat/completions', workspaceKey, {
        ...hello,
        model: '@openai/gpt-x',
      });
      assert.equal(answer.status, 200, answer.text);
      assert.equal(answer.body.choices[0].message.content, 'Echo: Hello, Switchyard');
      assert.equal(fake.requests.length, seen + 1);
      const upstream = fake.requests.at(-1)!;
      assert.equal(upstream.headers.authorization, `Bearer ${upstreamKey}`);
      assert.equal(JSON.parse(upstream.body).model, 'gpt-x');
    } finally {
      await expectCleanStop(app);
    }
  });
});
