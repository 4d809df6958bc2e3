import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { requestContext } from './context.ts';
import { maskSecret } from './logger.ts';
import { captureLogger, settleLogs } from './testing/logger.ts';

const API_KEY = 'sk-live-4f9a8b7c6d5e4f3a2b1c';
const BEARER = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.c2lnbmF0dXJl';

async function logOnce(write: (log: ReturnType<typeof captureLogger>['logger']) => void) {
  const captured = captureLogger('svc');
  write(captured.logger);
  await settleLogs();
  const lines = captured.lines();
  assert.equal(lines.length, 1, 'exactly one line was written');
  return { line: lines[0]!, text: captured.text() };
}

describe('maskSecret', () => {
  test('keeps the first four and last two characters of a long secret', () => {
    assert.equal(maskSecret('sk-abcdefghijkl'), 'sk-a****kl');
  });

  test('hides a short secret completely', () => {
    assert.equal(maskSecret('12345678'), '****');
    assert.equal(maskSecret(''), '****');
  });
});

describe('log output masks secrets', () => {
  test('values of keys named like secrets are masked, whatever their case or separator', async () => {
    const fields = {
      authorization: `Bearer ${BEARER}`,
      Authorization: 'Basic dXNlcjpwYXNzd29yZA==',
      api_key: API_KEY,
      apiKey: 'plain-key-value-123456',
      'x-api-key': 'another-key-value-7890',
      password: 'correct horse battery staple',
      client_secret: 'secret-value-abcdef',
      token: 'tok_0123456789abcdef',
      refresh_token: 'rt_0123456789abcdef',
      cookie: 'session=0123456789abcdef',
    };
    const { line, text } = await logOnce((log) => log.info('calling upstream', fields));
    for (const [key, value] of Object.entries(fields)) {
      assert.ok(!text.includes(value), `${key} leaked`);
      assert.equal(line[key], maskSecret(value), key);
    }
  });

  test('secret keys are masked inside nested objects and arrays', async () => {
    const { line, text } = await logOnce((log) =>
      log.warn('upstream call', {
        request: { headers: { Authorization: `Bearer ${BEARER}`, 'content-type': 'application/json' } },
        integrations: [{ slug: 'openai', api_key: API_KEY }],
      }),
    );
    assert.ok(!text.includes(BEARER));
    assert.ok(!text.includes(API_KEY));
    const request = line.request as { headers: Record<string, string> };
    assert.equal(request.headers['content-type'], 'application/json', 'other fields are kept');
    assert.equal((line.integrations as Array<Record<string, string>>)[0]!.slug, 'openai');
  });

  test('bearer tokens and sk- keys inside free text are masked in the message and in fields', async () => {
    const { line, text } = await logOnce((log) =>
      log.info(`retrying with key ${API_KEY}`, { note: `sent "Authorization: Bearer ${BEARER}" upstream` }),
    );
    assert.ok(!text.includes(API_KEY));
    assert.ok(!text.includes(BEARER));
    assert.equal(line.message, `retrying with key ${maskSecret(API_KEY)}`);
    assert.match(line.note as string, /^sent "Authorization: Bear\*\*\*\*[\w-]{2}" upstream$/);
  });

  test('values that only look similar are left alone', async () => {
    const { line } = await logOnce((log) =>
      log.info('completion', {
        model: 'gpt-4o',
        max_tokens: 256,
        prompt: 'ask about sk-short and bearer-less text',
      }),
    );
    assert.equal(line.model, 'gpt-4o');
    assert.equal(line.max_tokens, 256, 'a numeric field whose name contains "token" is not a secret');
    assert.equal(line.prompt, 'ask about sk-short and bearer-less text');
  });

  test('an error logged as a field keeps its message and stack, with secrets masked', async () => {
    const cause = Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:6379'), { code: 'ECONNREFUSED' });
    const err = new Error(`upstream rejected Bearer ${BEARER}`, { cause });
    const { line, text } = await logOnce((log) => log.error('request failed', { error: err }));
    assert.ok(!text.includes(BEARER));
    const error = line.error as {
      name: string;
      message: string;
      stack: string;
      cause: Record<string, unknown>;
    };
    assert.equal(error.name, 'Error');
    assert.match(error.message, /^upstream rejected Bear\*\*\*\*/);
    assert.match(error.stack, /logger\.test\.ts/);
    assert.equal(error.cause.message, 'connect ECONNREFUSED 10.0.0.1:6379');
    assert.equal(error.cause.code, 'ECONNREFUSED');
  });

  test('dates in fields are written as ISO timestamps', async () => {
    const { line } = await logOnce((log) =>
      log.info('key rotated', { rotatedAt: new Date(1_763_700_000_000), key: { expiresAt: new Date(0) } }),
    );
    assert.equal(line.rotatedAt, '2025-11-21T04:40:00.000Z');
    assert.deepEqual(line.key, { expiresAt: '1970-01-01T00:00:00.000Z' });
  });

  test('an error logged directly keeps its message and stack, with secrets masked', async () => {
    const { line, text } = await logOnce((log) => log.error(new Error(`bad key ${API_KEY}`)));
    assert.ok(!text.includes(API_KEY));
    assert.equal(line.message, `bad key ${maskSecret(API_KEY)}`);
    assert.match(line.stack as string, /^Error: bad key sk-l\*\*\*\*/);
  });
});

describe('log line shape', () => {
  test('lines are JSON with level, message, service and timestamp', async () => {
    const { line } = await logOnce((log) => log.info('hello', { n: 1 }));
    assert.equal(line.level, 'info');
    assert.equal(line.message, 'hello');
    assert.equal(line.service, 'svc');
    assert.equal(line.n, 1);
    assert.ok(!Number.isNaN(Date.parse(line.timestamp as string)));
  });

  test('lines written while serving a request carry its request and trace ids', async () => {
    const { line } = await logOnce((log) =>
      requestContext.run({ requestId: 'req-42', traceId: 'trace-7' }, () => log.info('inside')),
    );
    assert.equal(line.request_id, 'req-42');
    assert.equal(line.trace_id, 'trace-7');
  });

  test('levels below the configured one are not written', async () => {
    const captured = captureLogger('svc', 'warn');
    captured.logger.info('quiet');
    captured.logger.debug('quieter');
    captured.logger.warn('loud');
    await settleLogs();
    assert.deepEqual(
      captured.lines().map((l) => l.message),
      ['loud'],
    );
  });
});
