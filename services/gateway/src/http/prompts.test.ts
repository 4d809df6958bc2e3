import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, beforeEach, describe, test } from 'node:test';
import { eventually, type FakeOpenAi, type ServiceHarness } from '@switchyard/testing';
import { parseExposition, sampleSum } from '../metrics/exposition.ts';
import { startPromptHarness, type PromptHarness, type PromptInit } from '../testing/prompts.ts';

// POST /v1/prompts/:promptId/completions and /render: a stand-in prompt directory holds the
// prompts, the saved integration `fake` (a loopback OpenAI that echoes the last user message)
// answers, and the real control-plane and policy service bring guardrails and limits.

let p: PromptHarness;
let h: ServiceHarness;
let fake: FakeOpenAi;

before(async () => {
  p = await startPromptHarness();
  ({ h, fake } = p);
});
after(() => p?.close());
beforeEach(() => {
  p.directory.state.mode = 'answer';
  p.directory.state.leaky = false;
});

const MESSAGES_TEMPLATE = JSON.stringify([
  { role: 'system', content: 'You are {{tone}}.' },
  { role: 'user', content: 'Hello {{name}}, {{> signature}}' },
]);

/** A prompt of its own for each test: slugs never collide, so nothing one test cached touches another. */
function newPrompt(extra: Partial<PromptInit> = {}) {
  return p.store({
    template: MESSAGES_TEMPLATE,
    partials: { signature: 'from the {{team}} team' },
    partialVersionIds: { signature: randomUUID() },
    parametersJson: JSON.stringify({ temperature: 0.2, max_completion_tokens: 50 }),
    ...extra,
    slug: extra.slug ?? `greet-${randomUUID().slice(0, 8)}`,
  });
}

const variables = { tone: 'brief', name: 'Ada', team: 'ops' };

function run(
  promptId: string,
  body: unknown,
  options: { headers?: Record<string, string>; path?: 'completions' | 'render' } = {},
) {
  return h.request('POST', `/v1/prompts/${promptId}/${options.path ?? 'completions'}`, {
    key: h.workspaceKey,
    ...(typeof body === 'string'
      ? { body, headers: { 'content-type': 'application/json', ...options.headers } }
      : { json: body, ...(options.headers ? { headers: options.headers } : {}) }),
  });
}

const lastUpstreamBody = () => JSON.parse(fake.requests.at(-1)!.body) as Record<string, unknown>;

describe('prompt completions', () => {
  test('the rendered prompt goes to the prompt’s integration with its model; the root parameters win over the prompt’s', async () => {
    const prompt = newPrompt();
    const before = fake.requests.length;
    const res = await run(prompt.slug, { variables, temperature: 0.7, user: 'u-1' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.object, 'chat.completion');
    assert.equal(res.body.choices[0].message.content, 'Echo: Hello Ada, from the ops team');
    assert.equal(res.headers.get('x-vendor-provider'), 'openai');
    assert.equal(fake.requests.length, before + 1);
    assert.equal(fake.requests.at(-1)!.path, '/v1/chat/completions');
    assert.deepEqual(lastUpstreamBody(), {
      temperature: 0.7,
      max_completion_tokens: 50,
      user: 'u-1',
      model: 'gpt-x',
      messages: [
        { role: 'system', content: 'You are brief.' },
        { role: 'user', content: 'Hello Ada, from the ops team' },
      ],
    });

    const log = await eventually(() => p.requestLogs().find((e) => e.prompt?.promptId === prompt.id), {
      what: 'the request log',
    });
    assert.equal(log.status, 200);
    assert.equal(log.path, `/v1/prompts/${prompt.slug}/completions`);
    assert.equal(log.integrationSlug, 'fake');
    assert.equal(log.model, 'gpt-x');
    assert.equal(log.stream, false);
    assert.deepEqual(
      { ...log.prompt, $typeName: undefined },
      {
        $typeName: undefined,
        promptId: prompt.id,
        promptSlug: prompt.slug,
        versionId: prompt.versionId,
        versionNumber: 1,
      },
    );
    assert.match(log.requestBody, /Hello Ada, from the ops team/);

    // Counted as a chat request is, under the route's template.
    const metric = 'switchyard_gateway_request_duration_seconds';
    const counted = await eventually(async () => {
      const text = await h.metrics.registry.getSingleMetricAsString(metric);
      const count = sampleSum(parseExposition(text), `${metric}_count`, {
        route: '/v1/prompts/:promptId/completions',
        provider: 'openai',
        status_class: '2xx',
      });
      return count > 0 ? count : undefined;
    });
    assert.ok(counted >= 1);
  });

  test('streamed: the chat completion chunks arrive as the provider sends them, ending with [DONE], and are logged', async () => {
    const prompt = newPrompt();
    const response = await fetch(`${h.url}/v1/prompts/${prompt.id}/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.workspaceKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ variables, stream: true }),
    });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    const text = await response.text();
    const data = text
      .split('\n\n')
      .filter((event) => event.startsWith('data: '))
      .map((event) => event.slice('data: '.length));
    assert.equal(data.at(-1), '[DONE]');
    const content = data
      .slice(0, -1)
      .map((d) => JSON.parse(d) as { object: string; choices: Array<{ delta?: { content?: string } }> })
      .map((chunk) => {
        assert.equal(chunk.object, 'chat.completion.chunk');
        return chunk.choices[0]?.delta?.content ?? '';
      })
      .join('');
    assert.equal(content, 'Echo: Hello Ada, from the ops team');
    assert.equal(lastUpstreamBody().stream, true);
    const log = await eventually(() => p.requestLogs().find((e) => e.prompt?.promptId === prompt.id));
    assert.equal(log.stream, true);
    assert.equal(log.status, 200);
  });

  test('a version is chosen with @<n> or @latest; without one the default version runs', async () => {
    const slug = `versioned-${randomUUID().slice(0, 8)}`;
    p.store({ slug, template: 'default version', versionNumber: 1 }, ['']);
    p.store({ slug, template: 'version two', versionNumber: 2 }, ['2']);
    p.store({ slug, template: 'the newest', versionNumber: 3 }, ['latest', '3']);
    const contents: string[] = [];
    for (const id of [slug, `${slug}@2`, `${slug}@latest`]) {
      const res = await run(id, { variables: {} });
      assert.equal(res.status, 200, res.text);
      contents.push(res.body.choices[0].message.content);
    }
    assert.deepEqual(contents, ['Echo: default version', 'Echo: version two', 'Echo: the newest']);
    const asked = p.directory.asked.filter((r) => r.idOrSlug === slug).map((r) => r.version);
    assert.deepEqual(asked, ['', '2', 'latest']);
    assert.equal(p.directory.asked.at(-1)!.organisationId, h.organisationId);
    assert.equal(p.directory.asked.at(-1)!.workspaceId, h.workspaceId);

    for (const bad of [`${slug}@0`, `${slug}@first`, `${slug}@`, `${slug}@1@2`]) {
      const res = await run(encodeURIComponent(bad), { variables: {} });
      assert.equal(res.status, 400, `${bad}: ${res.text}`);
      assert.equal(res.body.error.code, 'invalid_prompt_id');
    }
  });

  test('a prompt is read once and kept; a prompt or partial change event of its organisation drops it', async () => {
    const prompt = newPrompt();
    const asks = () => p.directory.asked.filter((r) => r.idOrSlug === prompt.slug).length;
    assert.equal((await run(prompt.slug, { variables })).status, 200);
    assert.equal((await run(prompt.slug, { variables })).status, 200);
    assert.equal(asks(), 1, 'served from memory the second time');

    // Another organisation's change keeps it.
    p.changed('prompt', randomUUID());
    p.store({ ...prompt, template: 'changed' });
    await new Promise((resolve) => setTimeout(resolve, 200));
    let res = await run(prompt.slug, { variables });
    assert.equal(res.body.choices[0].message.content, 'Echo: Hello Ada, from the ops team');
    assert.equal(asks(), 1);

    p.changed('prompt_partial', h.organisationId);
    res = await eventually(
      async () => {
        const answer = await run(prompt.slug, { variables });
        return answer.body.choices?.[0]?.message.content === 'Echo: changed' ? answer : undefined;
      },
      { what: 'the changed prompt', intervalMs: 50 },
    );
    assert.equal(res.status, 200);
    assert.equal(asks(), 2);
  });

  test('the request’s own provider header wins over the prompt’s integration', async () => {
    const prompt = newPrompt({ virtualKey: 'no-such-integration' });
    const refused = await run(prompt.slug, { variables });
    assert.equal(refused.status, 404, refused.text);
    assert.match(refused.body.error.message, /no-such-integration/);
    const res = await run(prompt.slug, { variables }, { headers: { 'x-vendor-provider': '@fake' } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.choices[0].message.content, 'Echo: Hello Ada, from the ops team');
  });

  test('an unknown prompt is a 404 in the one error shape', async () => {
    const before = fake.requests.length;
    const res = await run('no-such-prompt', { variables: {} });
    assert.equal(res.status, 404, res.text);
    assert.deepEqual(res.body, {
      error: {
        message: "Prompt 'no-such-prompt' does not exist in this workspace.",
        type: 'not_found_error',
        param: 'promptId',
        code: 'prompt_not_found',
      },
    });
    // A prompt of another organisation is not found either.
    const other = p.store({ slug: `other-${randomUUID().slice(0, 8)}`, organisationId: randomUUID() });
    assert.equal((await run(other.slug, { variables: {} })).status, 404);
    // Nor when the directory answers with it anyway.
    p.directory.state.leaky = true;
    const leaked = p.store({ slug: `leaked-${randomUUID().slice(0, 8)}`, organisationId: randomUUID() });
    const res2 = await run(leaked.slug, { variables: {} });
    assert.equal(res2.status, 404, res2.text);
    assert.equal(res2.body.error.code, 'prompt_not_found');
    assert.equal(fake.requests.length, before);
  });

  test('missing variables are a 400 naming them; the provider never sees the request', async () => {
    const prompt = newPrompt();
    const before = fake.requests.length;
    const res = await run(prompt.slug, { variables: { name: 'Ada' } });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.error.code, 'missing_prompt_variables');
    assert.equal(res.body.error.param, 'variables');
    assert.match(res.body.error.message, /'tone'/);
    assert.match(res.body.error.message, /'team'/);
    assert.equal(fake.requests.length, before);
  });

  test('a bad body is a 400: no variables, variables not an object, not JSON, messages given, a bad parameter', async () => {
    const prompt = newPrompt();
    const before = fake.requests.length;
    const cases: Array<[unknown, string | null]> = [
      [{}, 'variables'],
      [{ variables: ['a'] }, 'variables'],
      [{ variables, stream: 'yes' }, 'stream'],
      ['{"variables":', null],
      [{ variables, messages: [{ role: 'user', content: 'x' }] }, 'messages'],
      [{ variables, temperature: 'hot' }, 'temperature'],
    ];
    for (const [body, param] of cases) {
      const res = await run(prompt.slug, body);
      assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
      assert.equal(res.body.error.type, 'invalid_request_error');
      if (param) assert.equal(res.body.error.param, param, JSON.stringify(body));
    }
    assert.equal(fake.requests.length, before);
  });

  test('a prompt directory that fails or does not answer is a 503 with a clear message, within the deadline', async () => {
    p.directory.state.mode = 'fail';
    let res = await run(`down-${randomUUID().slice(0, 8)}`, { variables: {} });
    assert.equal(res.status, 503, res.text);
    assert.equal(res.body.error.code, 'prompt_directory_unavailable');
    assert.match(res.body.error.message, /Prompts cannot be read right now/);

    p.directory.state.mode = 'hang';
    const started = Date.now();
    res = await run(`slow-${randomUUID().slice(0, 8)}`, { variables: {} });
    assert.equal(res.status, 503, res.text);
    assert.equal(res.body.error.code, 'prompt_directory_unavailable');
    assert.ok(Date.now() - started < 5_000, `answered after ${Date.now() - started} ms`);
  });

  test('guardrails apply: an input guardrail of the request’s config refuses the rendered prompt', async () => {
    const guardrail = await h.request('POST', '/v1/guardrails', {
      key: h.adminKey,
      json: {
        name: `no secrets ${randomUUID().slice(0, 6)}`,
        checks: [{ id: 'default.contains', parameters: { operator: 'none', words: ['classified'] } }],
        actions: { deny: true },
      },
    });
    assert.equal(guardrail.status, 200, guardrail.text);
    const prompt = newPrompt({ template: 'Tell me the {{what}} plans', partials: {} });
    const config = JSON.stringify({ provider: '@fake', input_guardrails: [guardrail.body.slug] });
    const before = fake.requests.length;
    const refused = await run(
      prompt.slug,
      { variables: { what: 'classified' } },
      { headers: { 'x-vendor-config': config } },
    );
    assert.equal(refused.status, 446, refused.text);
    assert.equal(refused.body.error.code, 'guardrail_denied');
    assert.equal(fake.requests.length, before, 'the provider never saw it');
    const allowed = await run(
      prompt.slug,
      { variables: { what: 'holiday' } },
      { headers: { 'x-vendor-config': config } },
    );
    assert.equal(allowed.status, 200, allowed.text);
    assert.equal(allowed.body.choices[0].message.content, 'Echo: Tell me the holiday plans');
    const log = await eventually(() =>
      p.requestLogs().find((e) => e.prompt?.promptId === prompt.id && e.status === 446),
    );
    assert.equal(log.guardrails[0]?.action, 'deny');
    assert.equal(log.guardrails[0]?.slug, guardrail.body.slug);
  });

  test('rate limits apply: a prompt completion over the limit is a 429 before the provider sees it', async () => {
    const team = `prompts-${randomUUID().slice(0, 8)}`;
    const policy = await h.request('POST', '/v2/policies/rate-limits', {
      key: h.workspaceKey,
      json: {
        name: 'one a minute',
        conditions: [{ key: 'metadata.team', value: team }],
        group_by: [{ key: 'api_key' }],
        type: 'requests',
        unit: 'rpm',
        value: 1,
      },
    });
    assert.equal(policy.status, 200, policy.text);
    const prompt = newPrompt();
    const headers = { 'x-vendor-metadata': JSON.stringify({ team }) };
    const refused = await eventually(
      async () => {
        const before = fake.requests.length;
        const res = await run(prompt.slug, { variables }, { headers });
        return res.status === 429 ? { res, sent: fake.requests.length - before } : undefined;
      },
      { what: 'a 429 from the rate limit', intervalMs: 50 },
    );
    assert.equal(refused.res.body.error.type, 'rate_limit_error', refused.res.text);
    assert.equal(refused.sent, 0);
  });
});

describe('prompt render', () => {
  test('renders the request the prompt makes without calling a model', async () => {
    const prompt = newPrompt();
    const before = fake.requests.length;
    const res = await run(prompt.slug, { variables, temperature: 1 }, { path: 'render' });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, {
      success: true,
      data: {
        temperature: 1,
        max_completion_tokens: 50,
        model: 'gpt-x',
        messages: [
          { role: 'system', content: 'You are brief.' },
          { role: 'user', content: 'Hello Ada, from the ops team' },
        ],
      },
    });
    assert.equal(fake.requests.length, before);

    const missing = await run(prompt.slug, { variables: {} }, { path: 'render' });
    assert.equal(missing.status, 400);
    assert.equal(missing.body.error.code, 'missing_prompt_variables');
    assert.equal((await run('nothing-here', { variables: {} }, { path: 'render' })).status, 404);
  });
});
