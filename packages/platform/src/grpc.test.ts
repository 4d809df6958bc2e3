import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { identity } from '@switchyard/proto';
import {
  AppError,
  BadRequest,
  Conflict,
  Forbidden,
  GuardrailDenied,
  InternalError,
  NotFound,
  NotImplemented,
  PayloadTooLarge,
  RequestTimeout,
  ServiceUnavailable,
  TooManyRequests,
  Unauthorized,
  UnprocessableEntity,
} from './errors.ts';
import {
  GrpcServer,
  checkGrpcHealth,
  createGrpcClient,
  type CallContext,
  type GrpcSecurity,
  type ServiceClient,
} from './grpc.ts';
import { captureLogger, settleLogs, type CapturedLogger } from './testing/logger.ts';
import { deferred, sleep, timed } from './testing/wait.ts';

type Request = identity.ResolveApiKeyRequest;
type Handler = (
  request: Request,
  context: CallContext,
) => Promise<{ principal?: { apiKeyId: string; name?: string } }>;

const SERVICE = identity.IdentityService.typeName;

interface Running {
  server: GrpcServer;
  port: number;
  address: string;
  log: CapturedLogger;
  /** Replaced by each test; the server calls the current one. */
  handler: Handler;
}

async function startServer(security: GrpcSecurity = {}): Promise<Running> {
  const log = captureLogger('grpc-test');
  const server = new GrpcServer({ logger: log.logger, security });
  const running = {
    server,
    port: 0,
    address: '',
    log,
    handler: (async (request) => ({ principal: { apiKeyId: `key-for-${request.keyHash}` } })) as Handler,
  };
  server.add(identity.IdentityService, {
    resolveApiKey: (request, context) => running.handler(request, context),
    resolveWorkspace: async () => ({}),
    getKeySettings: async () => ({}),
    updateKeySettings: async () => ({}),
  });
  running.port = await server.listen('127.0.0.1', 0);
  running.address = `127.0.0.1:${running.port}`;
  return running;
}

function client(
  address: string,
  security: GrpcSecurity = {},
): ServiceClient<typeof identity.IdentityService> {
  return createGrpcClient(identity.IdentityService, {
    address,
    target: 'control-plane',
    security,
    defaultDeadlineMs: 3_000,
  });
}

async function rejection(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof AppError, `expected an AppError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected the call to fail');
}

describe('gRPC calls', () => {
  let running: Running;
  let c: ServiceClient<typeof identity.IdentityService>;

  before(async () => {
    running = await startServer();
    c = client(running.address);
  });
  after(async () => {
    c.close();
    await running.server.close();
  });

  test('a request reaches the handler and its response comes back typed', async () => {
    running.handler = async (request) => ({
      principal: { apiKeyId: `key-for-${request.keyHash}`, name: 'ci' },
    });
    const response = await c.resolveApiKey({ keyHash: 'abc123' });
    assert.equal(response.principal?.apiKeyId, 'key-for-abc123');
    assert.equal(response.principal?.name, 'ci');
    assert.equal(response.principal?.workspaceId, '', 'unset fields have their proto defaults');
  });

  test('an empty response arrives with the message unset', async () => {
    running.handler = async () => ({});
    const response = await c.resolveApiKey({ keyHash: 'none' });
    assert.equal(response.principal, undefined);
  });

  test('the handler sees the call deadline', async () => {
    let deadline: CallContext['deadline'] | undefined;
    running.handler = async (_request, context) => {
      deadline = context.deadline;
      return {};
    };
    const sent = Date.now();
    await c.resolveApiKey({ keyHash: 'x' }, { deadlineMs: 1_500 });
    const ms = new Date(deadline as Date | number).getTime() - sent;
    assert.ok(ms > 1_000 && ms <= 1_600, `deadline was ${ms} ms after sending`);
  });

  const cases: Array<{
    name: string;
    thrown: () => AppError;
    expected: new (...args: never[]) => AppError;
    status: number;
  }> = [
    {
      name: 'BadRequest',
      thrown: () => new BadRequest('key_hash must be hex.', { param: 'key_hash', code: 'invalid_parameter' }),
      expected: BadRequest,
      status: 400,
    },
    {
      name: 'Unauthorized',
      thrown: () => new Unauthorized('Key revoked.'),
      expected: Unauthorized,
      status: 401,
    },
    {
      name: 'Forbidden',
      thrown: () => new Forbidden('Not your organisation.'),
      expected: Forbidden,
      status: 403,
    },
    { name: 'NotFound', thrown: () => new NotFound('No such key.'), expected: NotFound, status: 404 },
    {
      name: 'RequestTimeout',
      thrown: () => new RequestTimeout('Took too long.'),
      expected: RequestTimeout,
      status: 408,
    },
    { name: 'Conflict', thrown: () => new Conflict('Slug taken.'), expected: Conflict, status: 409 },
    {
      name: 'PayloadTooLarge',
      thrown: () => new PayloadTooLarge('Too big.'),
      expected: PayloadTooLarge,
      status: 413,
    },
    {
      name: 'UnprocessableEntity',
      thrown: () => new UnprocessableEntity('Budget exhausted.', { code: 'budget_exhausted' }),
      expected: UnprocessableEntity,
      status: 422,
    },
    {
      name: 'TooManyRequests',
      thrown: () => new TooManyRequests('Slow down.', 7),
      expected: TooManyRequests,
      status: 429,
    },
    {
      name: 'GuardrailDenied',
      thrown: () => new GuardrailDenied('Blocked by policy.'),
      expected: GuardrailDenied,
      status: 446,
    },
    {
      name: 'NotImplemented',
      thrown: () => new NotImplemented('Not here.'),
      expected: NotImplemented,
      status: 501,
    },
    {
      name: 'ServiceUnavailable',
      thrown: () => new ServiceUnavailable('Database down.'),
      expected: ServiceUnavailable,
      status: 503,
    },
  ];

  for (const c0 of cases) {
    test(`a ${c0.name} thrown by the handler comes back as ${c0.name} (${c0.status})`, async () => {
      const thrown = c0.thrown();
      running.handler = async () => {
        throw thrown;
      };
      const err = await rejection(c.resolveApiKey({ keyHash: 'x' }));
      assert.ok(err instanceof c0.expected, `got ${err.name} (${err.status})`);
      assert.equal(err.status, c0.status);
      assert.equal(err.type, thrown.type);
      if (c0.status < 500) {
        assert.equal(err.message, thrown.message, 'client errors keep their message');
        assert.equal(err.code, thrown.code);
      }
    });
  }

  test('BadRequest keeps its param and code across the call', async () => {
    running.handler = async () => {
      throw new BadRequest('bad', { param: 'messages[1].content', code: 'invalid_parameter' });
    };
    const err = await rejection(c.resolveApiKey({ keyHash: 'x' }));
    assert.equal(err.param, 'messages[1].content');
    assert.equal(err.code, 'invalid_parameter');
    assert.deepEqual(err.toBody(), {
      error: {
        message: 'bad',
        type: 'invalid_request_error',
        param: 'messages[1].content',
        code: 'invalid_parameter',
      },
    });
  });

  test('TooManyRequests keeps its retry-after across the call', async () => {
    running.handler = async () => {
      throw new TooManyRequests('Slow down.', 42);
    };
    const err = await rejection(c.resolveApiKey({ keyHash: 'x' }));
    assert.ok(err instanceof TooManyRequests);
    assert.equal(err.headers['retry-after'], '42');
    assert.equal(err.code, 'rate_limited');
  });

  test('a non-AppError comes back as a 500 without its message, and is logged on the server', async () => {
    running.handler = async () => {
      throw new Error('relation "api_keys" does not exist; password=hunter2');
    };
    const err = await rejection(c.resolveApiKey({ keyHash: 'x' }));
    assert.ok(err instanceof InternalError);
    assert.equal(err.status, 500);
    assert.equal(err.message, 'control-plane failed.');
    assert.ok(!JSON.stringify(err.toBody()).includes('hunter2'));
    assert.ok(
      !String((err.cause as Error | undefined)?.message).includes('hunter2'),
      'the gRPC status details carry no internals',
    );
    await settleLogs();
    const line = running.log
      .lines()
      .find((l) => l.message === 'grpc handler failed' && JSON.stringify(l.error).includes('api_keys'));
    assert.ok(line, 'the failure was logged on the server with the original error');
    assert.equal(line.method, 'ResolveApiKey');
    assert.match(JSON.stringify(line.error), /api_keys/);
  });

  test('an idempotent method is retried once the server answers UNAVAILABLE', async () => {
    let attempts = 0;
    running.handler = async () => {
      attempts++;
      if (attempts === 1) throw new ServiceUnavailable('warming up');
      return { principal: { apiKeyId: 'second-try' } };
    };
    const response = await c.resolveApiKey({ keyHash: 'x' });
    assert.equal(response.principal?.apiKeyId, 'second-try');
    assert.equal(attempts, 2);
  });

  test('a deadline shorter than a slow handler yields ServiceUnavailable', async () => {
    const release = deferred();
    running.handler = async () => {
      await release.promise;
      return {};
    };
    try {
      const { value: err, ms } = await timed(
        rejection(c.resolveApiKey({ keyHash: 'x' }, { deadlineMs: 150 })),
      );
      assert.ok(err instanceof ServiceUnavailable);
      assert.equal(err.message, 'control-plane did not answer in time.');
      assert.ok(ms < 1_500, `failed after ${Math.round(ms)} ms`);
    } finally {
      release.resolve();
    }
  });

  test('aborting the signal cancels the call with ServiceUnavailable', async () => {
    const release = deferred();
    running.handler = async () => {
      await release.promise;
      return {};
    };
    try {
      const controller = new AbortController();
      const call = c.resolveApiKey({ keyHash: 'x' }, { signal: controller.signal, deadlineMs: 5_000 });
      setTimeout(() => controller.abort(), 50);
      const { value: err, ms } = await timed(rejection(call));
      assert.ok(err instanceof ServiceUnavailable);
      assert.ok(ms < 1_500);
    } finally {
      release.resolve();
    }
  });

  test('health checks report SERVING for the server and for each added service', async () => {
    const options = { address: running.address, target: 'control-plane', security: {} };
    await checkGrpcHealth(options);
    await checkGrpcHealth(options, SERVICE);
    await assert.rejects(checkGrpcHealth(options, 'no.such.Service'), NotFound);
  });

  test('adding a service without a handler for every method is refused', () => {
    const server = new GrpcServer({ logger: captureLogger().logger, security: {} });
    assert.throws(
      () => server.add(identity.IdentityService, {} as never),
      /switchyard\.identity\.v1\.IdentityService\.ResolveApiKey: only unary handlers are supported/,
    );
  });
});

describe('gRPC serving state and shutdown', () => {
  test('setServing(false) makes health checks fail, setServing(true) restores them', async (t) => {
    const running = await startServer();
    t.after(() => running.server.close());
    const options = { address: running.address, target: 'control-plane', security: {} };
    running.server.setServing(false);
    await assert.rejects(checkGrpcHealth(options), /control-plane is not serving/);
    await assert.rejects(checkGrpcHealth(options, SERVICE), /control-plane is not serving/);
    running.server.setServing(true);
    await checkGrpcHealth(options);
  });

  test('close() waits for an in-flight call to finish', async () => {
    const running = await startServer();
    const entered = deferred();
    const release = deferred();
    running.handler = async () => {
      entered.resolve();
      await release.promise;
      return { principal: { apiKeyId: 'finished' } };
    };
    const c = client(running.address);
    try {
      const call = c.resolveApiKey({ keyHash: 'x' });
      await entered.promise;
      let closed = false;
      const closing = running.server.close().then(() => (closed = true));
      await sleep(50);
      assert.equal(closed, false, 'close() did not return while a call was in flight');
      release.resolve();
      assert.equal((await call).principal?.apiKeyId, 'finished');
      await closing;
    } finally {
      c.close();
    }
  });

  test('a stopped server yields ServiceUnavailable to callers and failing health checks', async () => {
    const running = await startServer();
    const c = client(running.address);
    try {
      await c.resolveApiKey({ keyHash: 'x' });
      await running.server.close();
      const err = await rejection(c.resolveApiKey({ keyHash: 'x' }, { deadlineMs: 2_000 }));
      assert.ok(err instanceof ServiceUnavailable, `got ${err.name}`);
      assert.match(err.message, /^control-plane (is unavailable|did not answer in time)\.$/);
      await assert.rejects(
        checkGrpcHealth({ address: running.address, target: 'control-plane', security: {} }),
        ServiceUnavailable,
      );
    } finally {
      c.close();
    }
  });

  test('a client whose server never started fails with ServiceUnavailable, not a crash', async () => {
    const running = await startServer();
    await running.server.close();
    const c = client(running.address);
    try {
      await assert.rejects(c.waitForReady(300));
      const err = await rejection(c.resolveApiKey({ keyHash: 'x' }, { deadlineMs: 1_000 }));
      assert.ok(err instanceof ServiceUnavailable);
    } finally {
      c.close();
    }
  });
});

describe('gRPC service token', () => {
  let running: Running;
  before(async () => {
    running = await startServer({ authToken: 'shared-service-token' });
  });
  after(() => running.server.close());

  test('a client with the right token is served', async () => {
    const c = client(running.address, { authToken: 'shared-service-token' });
    try {
      assert.equal((await c.resolveApiKey({ keyHash: 'k' })).principal?.apiKeyId, 'key-for-k');
    } finally {
      c.close();
    }
  });

  test('a client with a wrong token or none is refused with ServiceUnavailable naming the credentials', async () => {
    let calls = 0;
    const original = running.handler;
    running.handler = async (request, context) => {
      calls++;
      return original(request, context);
    };
    for (const security of [
      { authToken: 'wrong-token' },
      { authToken: 'shared-service-token-but-longer' },
      {},
    ]) {
      const c = client(running.address, security);
      try {
        const err = await rejection(c.resolveApiKey({ keyHash: 'k' }));
        assert.ok(err instanceof ServiceUnavailable, `got ${err.name}`);
        assert.equal(err.message, "control-plane refused this service's credentials.");
      } finally {
        c.close();
      }
    }
    assert.equal(calls, 0, 'the handler never ran');
    running.handler = original;
  });

  test('health checks need no token', async () => {
    await checkGrpcHealth({ address: running.address, target: 'control-plane', security: {} });
  });

  test('an Unauthorized thrown by the handler stays a 401, unlike a refused service token', async () => {
    const original = running.handler;
    running.handler = async () => {
      throw new Unauthorized('Key revoked.');
    };
    const c = client(running.address, { authToken: 'shared-service-token' });
    try {
      const err = await rejection(c.resolveApiKey({ keyHash: 'k' }));
      assert.ok(err instanceof Unauthorized);
      assert.equal(err.message, 'Key revoked.');
    } finally {
      c.close();
      running.handler = original;
    }
  });
});

describe('gRPC mutual TLS', () => {
  let dir: string;
  const file = (name: string) => join(dir, name);

  function openssl(...args: string[]): void {
    execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  }

  /** A private key and a certificate for `name`, signed by the CA `ca`. */
  function issue(name: string, ca: string, extensions: string): void {
    writeFileSync(file(`${name}.ext`), extensions);
    openssl(
      'req',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.csr`,
      '-subj',
      `/CN=${name}`,
    );
    openssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      `${ca}.crt`,
      '-CAkey',
      `${ca}.key`,
      '-CAcreateserial',
      '-days',
      '1',
      '-out',
      `${name}.crt`,
      '-extfile',
      `${name}.ext`,
    );
  }

  function newCa(name: string): void {
    openssl(
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.crt`,
      '-days',
      '1',
      '-subj',
      `/CN=${name}`,
    );
  }

  const tls = (identityName: string, ca = 'ca') => ({
    tls: {
      caFile: file(`${ca}.crt`),
      certFile: file(`${identityName}.crt`),
      keyFile: file(`${identityName}.key`),
    },
  });

  let running: Running;
  // The server certificate names localhost; TLS clients connect by that name.
  const tlsAddress = () => `localhost:${running.port}`;

  before(async () => {
    try {
      execFileSync('openssl', ['version'], { stdio: 'pipe' });
    } catch {
      throw new Error('the mTLS tests need the openssl command on PATH to make throwaway certificates');
    }
    dir = mkdtempSync(join(tmpdir(), 'grpc-mtls-'));
    newCa('ca');
    newCa('rogue-ca');
    issue('server', 'ca', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
    issue('client', 'ca', 'extendedKeyUsage=clientAuth\n');
    issue('intruder', 'rogue-ca', 'extendedKeyUsage=clientAuth\n');
    running = await startServer(tls('server'));
  });
  after(async () => {
    await running?.server.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('a TLS client with a certificate signed by the shared CA is served', async () => {
    const c = client(tlsAddress(), tls('client'));
    try {
      assert.equal((await c.resolveApiKey({ keyHash: 'k' })).principal?.apiKeyId, 'key-for-k');
    } finally {
      c.close();
    }
    await checkGrpcHealth({ address: tlsAddress(), target: 'control-plane', security: tls('client') });
  });

  test('a plaintext client cannot call the TLS server', async () => {
    const c = client(running.address);
    try {
      const err = await rejection(c.resolveApiKey({ keyHash: 'k' }, { deadlineMs: 2_000 }));
      assert.ok(err instanceof ServiceUnavailable, `got ${err.name}`);
    } finally {
      c.close();
    }
  });

  test('a client whose certificate comes from another CA is refused', async () => {
    const c = client(tlsAddress(), {
      tls: { caFile: file('ca.crt'), certFile: file('intruder.crt'), keyFile: file('intruder.key') },
    });
    try {
      const err = await rejection(c.resolveApiKey({ keyHash: 'k' }, { deadlineMs: 2_000 }));
      assert.ok(err instanceof ServiceUnavailable, `got ${err.name}`);
    } finally {
      c.close();
    }
  });

  test('a client that does not trust the server CA refuses to talk to it', async () => {
    const c = client(tlsAddress(), tls('client', 'rogue-ca'));
    try {
      const err = await rejection(c.resolveApiKey({ keyHash: 'k' }, { deadlineMs: 2_000 }));
      assert.ok(err instanceof ServiceUnavailable, `got ${err.name}`);
    } finally {
      c.close();
    }
  });
});
