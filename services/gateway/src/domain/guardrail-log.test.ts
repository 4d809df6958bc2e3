import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eventually, type ServiceHarness } from '@switchyard/testing';
import { startGuardrailHarness, type GuardrailHarness, type Json } from '../testing/guardrails.ts';
import { everyService } from '../testing/services.ts';

let g: GuardrailHarness;
let h: ServiceHarness;

before(async () => {
  g = await startGuardrailHarness({
    upstreamKey: 'sk-guardrail-log-upstream-0123456789',
    services: everyService,
  });
  ({ h } = g);
});
after(() => g?.close());

const guardrail = (checks: Json[], actions: Json) => g.guardrail(checks, actions);
const config = (guardrails: { input?: string[]; output?: string[] }) => g.config(guardrails);

function chat(content: string, headers: Record<string, string> = {}) {
  return h.request('POST', '/v1/chat/completions', {
    key: h.workspaceKey,
    json: { model: 'gpt-x', messages: [{ role: 'user', content }] },
    headers,
  });
}

/** The request's log once log-export has stored it. */
function logOf(res: { headers: Headers }): Promise<Json> {
  const id = res.headers.get('x-request-id')!;
  return eventually(
    async () => {
      const found = await h.request('GET', `/v1/logs/${id}`, { key: h.workspaceKey });
      return found.status === 200 ? (found.body as Json) : undefined;
    },
    { what: `log ${id}` },
  );
}

const pii = [{ id: 'default.pii', parameters: { categories: ['email'] } }];
const forbiddenWords = [{ id: 'default.contains', parameters: { operator: 'none', words: ['classified'] } }];

describe('guardrail verdicts on the request log', () => {
  test('a warning guardrail is logged with its warn verdict and the check that failed', async () => {
    const { id, slug, versionId } = await guardrail(pii, { deny: false });
    const res = await chat('write to jane.doe@example.com', { 'x-vendor-config': config({ input: [slug] }) });
    assert.equal(res.status, 200, res.text);
    const log = await logOf(res);
    assert.equal(log.status, 200);
    assert.equal(log.guardrails.length, 1, JSON.stringify(log.guardrails));
    const [run] = log.guardrails as Json[];
    assert.equal(run!.phase, 'input');
    assert.equal(run!.guardrail_id, id);
    assert.equal(run!.slug, slug);
    assert.equal(run!.version_id, versionId);
    assert.equal(run!.action, 'warn');
    assert.match(run!.explanation, /default\.pii/);
    assert.equal(run!.redactions, 0);
    assert.equal(typeof run!.duration_ms, 'number');
    assert.deepEqual(
      (run!.checks as Json[]).map(({ id, passed, error }) => ({ id, passed, error })),
      [{ id: 'default.pii', passed: false, error: null }],
    );
    assert.match(run!.checks[0].explanation, /email/i);
  });

  test('a request denied with 446 is logged with the deny verdict', async () => {
    const { id, slug } = await guardrail(forbiddenWords, { deny: true });
    const res = await chat('this is classified', { 'x-vendor-config': config({ input: [slug] }) });
    assert.equal(res.status, 446, res.text);
    const log = await logOf(res);
    assert.equal(log.status, 446);
    assert.equal(log.error_message, res.body.error.message);
    assert.deepEqual(
      (log.guardrails as Json[]).map((run) => ({
        phase: run.phase,
        guardrail_id: run.guardrail_id,
        slug: run.slug,
        action: run.action,
        checks: (run.checks as Json[]).map((check) => ({ id: check.id, passed: check.passed })),
      })),
      [
        {
          phase: 'input',
          guardrail_id: id,
          slug,
          action: 'deny',
          checks: [{ id: 'default.contains', passed: false }],
        },
      ],
    );
    assert.match(log.guardrails[0].explanation, /forbidden words/);
  });

  test('input and output guardrails are logged in the order they ran, a passing one as allow', async () => {
    const input = await guardrail(forbiddenWords, { deny: true });
    const output = await guardrail(pii, { deny: false, redact: true });
    const res = await chat('mail jane.doe@example.com', {
      'x-vendor-config': config({ input: [input.slug], output: [output.slug] }),
    });
    assert.equal(res.status, 200, res.text);
    const log = await logOf(res);
    assert.deepEqual(
      (log.guardrails as Json[]).map((run) => [run.phase, run.slug, run.action, run.redactions]),
      [
        ['input', input.slug, 'allow', 0],
        ['output', output.slug, 'redact', 1],
      ],
    );
  });

  test('a request whose config names no guardrail is logged with none', async () => {
    const res = await chat('hello', { 'x-vendor-config': config({}) });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual((await logOf(res)).guardrails, []);
  });
});
