import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { ConfigError, baseEnvSchema, env, loadConfig } from './config.ts';

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected loadConfig to throw');
}

describe('loadConfig', () => {
  test('a body size body-parser cannot read is refused, naming the variable', () => {
    const schema = z.object({ MAX_MANAGEMENT_REQUEST_BODY: env.size('1mb') });
    assert.equal(
      loadConfig(schema, { MAX_MANAGEMENT_REQUEST_BODY: '512kb' }).MAX_MANAGEMENT_REQUEST_BODY,
      '512kb',
    );
    assert.match(
      configError(() => loadConfig(schema, { MAX_MANAGEMENT_REQUEST_BODY: 'lots' })).message,
      /MAX_MANAGEMENT_REQUEST_BODY: expected a size such as 512kb or 25mb/,
    );
  });

  test('applies the base defaults to an empty environment', () => {
    assert.deepEqual(loadConfig(baseEnvSchema, {}), {
      NODE_ENV: 'development',
      LOG_LEVEL: 'info',
      HOST: '0.0.0.0',
      PORT: 8080,
      SHUTDOWN_GRACE_MS: 10_000,
      HTTP_HEADERS_TIMEOUT_MS: 10_000,
      HTTP_REQUEST_TIMEOUT_MS: 60_000,
      HTTP_KEEP_ALIVE_TIMEOUT_MS: 65_000,
      HTTP_MAX_CONNECTIONS: 10_000,
      CORS_ALLOWED_ORIGINS: [],
      CORS_MAX_AGE_SECONDS: 600,
      GRPC_DEADLINE_MS: 5_000,
      DB_QUERY_TIMEOUT_MS: 15_000,
      DB_CONNECT_TIMEOUT_MS: 5_000,
      OTEL_EXPORTER_OTLP_HEADERS: {},
      TRACE_SAMPLE_RATIO: 1,
    });
  });

  test('reads and converts the values that are set', () => {
    const config = loadConfig(baseEnvSchema, {
      NODE_ENV: 'production',
      LOG_LEVEL: 'debug',
      HOST: '127.0.0.1',
      PORT: '9090',
      SHUTDOWN_GRACE_MS: '2500',
      GRPC_AUTH_TOKEN: 'shared',
    });
    assert.equal(config.NODE_ENV, 'production');
    assert.equal(config.LOG_LEVEL, 'debug');
    assert.equal(config.HOST, '127.0.0.1');
    assert.equal(config.PORT, 9090);
    assert.equal(config.SHUTDOWN_GRACE_MS, 2500);
    assert.equal(config.GRPC_AUTH_TOKEN, 'shared');
  });

  test('reads the tracing settings: endpoint, export headers, service name, sample ratio', () => {
    const config = loadConfig(baseEnvSchema, {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel-collector:4318',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=abc%3D%3D, x-team = core',
      OTEL_SERVICE_NAME: 'edge-gateway',
      TRACE_SAMPLE_RATIO: '0.25',
    });
    assert.equal(config.OTEL_EXPORTER_OTLP_ENDPOINT, 'http://otel-collector:4318');
    assert.deepEqual(config.OTEL_EXPORTER_OTLP_HEADERS, { 'x-api-key': 'abc==', 'x-team': 'core' });
    assert.equal(config.OTEL_SERVICE_NAME, 'edge-gateway');
    assert.equal(config.TRACE_SAMPLE_RATIO, 0.25);
  });

  test('refuses a tracing endpoint that is not http(s), headers that are not pairs, a ratio outside 0 to 1', () => {
    const message = configError(() =>
      loadConfig(baseEnvSchema, {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://collector:4317',
        OTEL_EXPORTER_OTLP_HEADERS: 'just-a-name',
        TRACE_SAMPLE_RATIO: '1.5',
      }),
    ).message;
    assert.match(message, /OTEL_EXPORTER_OTLP_ENDPOINT: /);
    assert.match(message, /OTEL_EXPORTER_OTLP_HEADERS: 'just-a-name' is not a name=value pair/);
    assert.match(message, /TRACE_SAMPLE_RATIO: /);
  });

  test('treats a blank variable as unset, so the default applies', () => {
    const config = loadConfig(baseEnvSchema, { PORT: '', LOG_LEVEL: '', GRPC_AUTH_TOKEN: '' });
    assert.equal(config.PORT, 8080);
    assert.equal(config.LOG_LEVEL, 'info');
    assert.equal(config.GRPC_AUTH_TOKEN, undefined);
  });

  test('names the bad variable in the error', () => {
    const err = configError(() => loadConfig(baseEnvSchema, { PORT: 'eighty' }));
    assert.equal(err.name, 'ConfigError');
    assert.match(err.message, /^Invalid configuration: PORT: /);
  });

  test('rejects a port outside 0 to 65535 and a non-integer port', () => {
    assert.match(configError(() => loadConfig(baseEnvSchema, { PORT: '65536' })).message, /PORT: /);
    assert.match(configError(() => loadConfig(baseEnvSchema, { PORT: '-1' })).message, /PORT: /);
    assert.match(configError(() => loadConfig(baseEnvSchema, { PORT: '80.5' })).message, /PORT: /);
    assert.equal(loadConfig(baseEnvSchema, { PORT: '0' }).PORT, 0);
    assert.equal(loadConfig(baseEnvSchema, { PORT: '65535' }).PORT, 65535);
  });

  test('lists every bad variable at once', () => {
    const err = configError(() =>
      loadConfig(baseEnvSchema, { PORT: 'x', LOG_LEVEL: 'verbose', SHUTDOWN_GRACE_MS: '999999999' }),
    );
    assert.match(err.message, /PORT: /);
    assert.match(err.message, /LOG_LEVEL: /);
    assert.match(err.message, /SHUTDOWN_GRACE_MS: /);
    assert.equal(err.message.split('; ').length, 3);
  });

  test('names a missing required variable', () => {
    const schema = z.object({ DATABASE_URL: env.url(), API_NAME: env.string() });
    const err = configError(() => loadConfig(schema, {}));
    assert.match(err.message, /DATABASE_URL: /);
    assert.match(err.message, /API_NAME: /);
  });

  test('names an invalid URL', () => {
    const schema = z.object({ DATABASE_URL: env.url() });
    assert.match(
      configError(() => loadConfig(schema, { DATABASE_URL: 'not a url' })).message,
      /DATABASE_URL: /,
    );
    assert.equal(
      loadConfig(schema, { DATABASE_URL: 'postgres://u:p@h:5432/db' }).DATABASE_URL,
      'postgres://u:p@h:5432/db',
    );
  });

  test('reads process.env when no environment is passed', () => {
    const name = `SWITCHYARD_TEST_${process.pid}`;
    process.env[name] = 'from-process';
    try {
      const config = loadConfig(z.object({ [name]: env.string() }));
      assert.equal(config[name], 'from-process');
    } finally {
      delete process.env[name];
    }
  });
});

describe('env.bool', () => {
  const schema = z.object({ FLAG: env.bool(false), ON_BY_DEFAULT: env.bool(true) });

  test('accepts true/1/yes/on as true and false/0/no/off as false', () => {
    for (const value of ['true', '1', 'yes', 'on'])
      assert.equal(loadConfig(schema, { FLAG: value }).FLAG, true, value);
    for (const value of ['false', '0', 'no', 'off']) {
      assert.equal(loadConfig(schema, { ON_BY_DEFAULT: value }).ON_BY_DEFAULT, false, value);
    }
  });

  test('uses the fallback when unset or blank', () => {
    assert.deepEqual(loadConfig(schema, {}), { FLAG: false, ON_BY_DEFAULT: true });
    assert.deepEqual(loadConfig(schema, { FLAG: '', ON_BY_DEFAULT: '' }), {
      FLAG: false,
      ON_BY_DEFAULT: true,
    });
  });

  test('rejects anything else, naming the variable', () => {
    assert.match(
      configError(() => loadConfig(schema, { FLAG: 'maybe' })).message,
      /FLAG: expected true or false/,
    );
  });
});

describe('env.list', () => {
  const schema = z.object({ BROKERS: env.list() });

  test('splits on commas, trims, and drops empty items', () => {
    assert.deepEqual(loadConfig(schema, { BROKERS: ' a:9092, b:9092,,c:9092 ,' }).BROKERS, [
      'a:9092',
      'b:9092',
      'c:9092',
    ]);
  });

  test('is empty when unset or blank', () => {
    assert.deepEqual(loadConfig(schema, {}).BROKERS, []);
    assert.deepEqual(loadConfig(schema, { BROKERS: '' }).BROKERS, []);
  });
});

describe('env.int', () => {
  const schema = z.object({ POOL: env.int(12, 1, 500) });

  test('uses the fallback when unset and parses integers within bounds', () => {
    assert.equal(loadConfig(schema, {}).POOL, 12);
    assert.equal(loadConfig(schema, { POOL: '1' }).POOL, 1);
    assert.equal(loadConfig(schema, { POOL: '500' }).POOL, 500);
  });

  test('rejects values below the minimum, above the maximum, fractional or non-numeric', () => {
    for (const value of ['0', '501', '2.5', 'many']) {
      assert.match(
        configError(() => loadConfig(schema, { POOL: value })).message,
        /^Invalid configuration: POOL: /,
        value,
      );
    }
  });
});

describe('env.optionalString and env.string', () => {
  test('an optional string is undefined when unset and kept when set', () => {
    const schema = z.object({ TOKEN: env.optionalString() });
    assert.equal(loadConfig(schema, {}).TOKEN, undefined);
    assert.equal(loadConfig(schema, { TOKEN: 'abc' }).TOKEN, 'abc');
  });

  test('a string with a fallback uses it when unset', () => {
    const schema = z.object({ NAME: env.string('switchyard') });
    assert.equal(loadConfig(schema, {}).NAME, 'switchyard');
    assert.equal(loadConfig(schema, { NAME: 'other' }).NAME, 'other');
  });

  test('only known log levels are accepted', () => {
    const schema = z.object({ LOG_LEVEL: env.logLevel() });
    for (const level of ['error', 'warn', 'info', 'http', 'debug']) {
      assert.equal(loadConfig(schema, { LOG_LEVEL: level }).LOG_LEVEL, level);
    }
    assert.match(configError(() => loadConfig(schema, { LOG_LEVEL: 'trace' })).message, /LOG_LEVEL: /);
  });
});
