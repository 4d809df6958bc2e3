import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { identity } from '@switchyard/proto';
import {
  AppError,
  BadRequest,
  ConfigError,
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
} from '@switchyard/core';
import {
  GrpcServer,
  callerToken,
  checkCallerIdentity,
  channelTarget,
  checkGrpcHealth,
  createGrpcClient,
  type CallContext,
  type CallerRules,
  type GrpcSecurity,
  type ServiceClient,
} from './grpc.ts';
import type { ServiceName } from './routes.ts';
import { createClients } from './runtime.ts';
import {
  type CapturedLogger,
  captureLogger,
  deferred,
  TcpRelay,
  settleLogs,
  sleep,
  timed,
} from '@switchyard/core/testing';

type Request = identity.ResolveApiKeyRequest;
type Handler = (
  request: Request,
  context: CallContext,
) => Promise<{ principal?: { apiKeyId: string; name?: string } }>;

const SERVICE = identity.IdentityService.typeName;

/** Who may call the test server: ResolveApiKey is open to gateway and admin, ResolveWorkspace to gateway alone. */
const callers: CallerRules<typeof identity.IdentityService> = {
  resolveApiKey: ['gateway', 'admin'],
  resolveWorkspace: ['gateway'],
  getKeySettings: ['admin'],
  updateKeySettings: ['admin'],
  provisionOrganisationUser: ['admin'],
  removeOrganisationUser: ['admin'],
  setWorkspaceMember: ['admin'],
};

interface Running {
  server: GrpcServer;
  port: number;
  address: string;
  log: CapturedLogger;
  /** Replaced by each test; the server calls the current one. */
  handler: Handler;
}

async function startServer(
  security: GrpcSecurity = {},
  options: { maxConnectionAgeMs?: number } = {},
): Promise<Running> {
  const log = captureLogger('grpc-test');
  const server = new GrpcServer({ logger: log.logger, security, ...options });
  const running = {
    server,
    port: 0,
    address: '',
    log,
    handler: (async (request) => ({ principal: { apiKeyId: `key-for-${request.keyHash}` } })) as Handler,
  };
  server.add(
    identity.IdentityService,
    {
      resolveApiKey: (request, context) => running.handler(request, context),
      resolveWorkspace: async () => ({}),
      getKeySettings: async () => ({}),
      updateKeySettings: async () => ({}),
      provisionOrganisationUser: async () => ({}),
      removeOrganisationUser: async () => ({}),
      setWorkspaceMember: async () => ({}),
    },
    callers,
  );
  running.port = await server.listen('127.0.0.1', 0);
  running.address = `127.0.0.1:${running.port}`;
  return running;
}

function client(
  address: string,
  security: GrpcSecurity = {},
  /** null: a client that names no calling service. */
  caller: ServiceName | null = 'gateway',
): ServiceClient<typeof identity.IdentityService> {
  return createGrpcClient(identity.IdentityService, {
    address,
    target: 'control-plane',
    security,
    caller: caller ?? undefined,
    defaultDeadlineMs: 3_000,
  });
}

/** A ResolveApiKey call with hand-made metadata; resolves to the gRPC status code. */
async function rawCall(address: string, metadata: Record<string, string>): Promise<grpc.status> {
  const raw = new grpc.Client(address, grpc.credentials.createInsecure());
  const meta = new grpc.Metadata();
  for (const [key, value] of Object.entries(metadata)) meta.set(key, value);
  try {
    return await new Promise((resolve) => {
      raw.makeUnaryRequest(
        `/${SERVICE}/ResolveApiKey`,
        () => Buffer.alloc(0),
        (bytes: Buffer) => bytes,
        {},
        meta,
        { deadline: Date.now() + 3_000 },
        (err) => resolve(err ? err.code : grpc.status.OK),
      );
    });
  } finally {
    raw.close();
  }
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

  test('a call that names no deadline carries GRPC_DEADLINE_MS: a server that never answers gives ServiceUnavailable', async () => {
    const never = deferred();
    running.handler = async () => {
      await never.promise;
      return {};
    };
    const set = createClients(['identity'], () => running.address, {}, 'gateway', 100);
    try {
      const { value: err, ms } = await timed(
        rejection(set.clients.identity!.resolveApiKey({ keyHash: 'x' })),
      );
      assert.ok(err instanceof ServiceUnavailable);
      assert.equal(err.message, 'control-plane did not answer in time.');
      assert.ok(ms < 2_000, `failed after ${Math.round(ms)} ms, not at the 100 ms deadline`);
    } finally {
      set.close();
      never.resolve();
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
      () => server.add(identity.IdentityService, {} as never, callers),
      /switchyard\.identity\.v1\.IdentityService\.ResolveApiKey: only unary handlers are supported/,
    );
  });

  test('adding a service whose caller rules leave out a method, name nobody or a stranger is refused', () => {
    const server = new GrpcServer({ logger: captureLogger().logger, security: {} });
    const handlers = {
      resolveApiKey: async () => ({}),
      resolveWorkspace: async () => ({}),
      getKeySettings: async () => ({}),
      updateKeySettings: async () => ({}),
      provisionOrganisationUser: async () => ({}),
      removeOrganisationUser: async () => ({}),
      setWorkspaceMember: async () => ({}),
    };
    const { updateKeySettings: _left, ...withoutOne } = callers;
    assert.throws(
      () => server.add(identity.IdentityService, handlers, withoutOne as never),
      /IdentityService\.UpdateKeySettings: no calling services declared/,
    );
    assert.throws(
      () => server.add(identity.IdentityService, handlers, { ...callers, getKeySettings: [] }),
      /IdentityService\.GetKeySettings: no calling services declared/,
    );
    assert.throws(
      () =>
        server.add(identity.IdentityService, handlers, {
          ...callers,
          resolveWorkspace: ['gateway', 'billing' as ServiceName],
        }),
      /IdentityService\.ResolveWorkspace: unknown calling service billing/,
    );
    assert.throws(
      () =>
        server.add(identity.IdentityService, handlers, { ...callers, deleteEverything: ['admin'] } as never),
      /IdentityService: caller rule for unknown method deleteEverything/,
    );
  });
});

describe('gRPC caller rules', () => {
  let running: Running;
  before(async () => {
    running = await startServer();
  });
  after(() => running.server.close());

  /** Counts the calls that reach the ResolveApiKey handler and records who made them. */
  function recordCallers(): ServiceName[] {
    const seen: ServiceName[] = [];
    running.handler = async (_request, context) => {
      seen.push(context.caller);
      return { principal: { apiKeyId: 'k' } };
    };
    return seen;
  }

  test('each service the method names is served, and the handler learns which one called', async () => {
    const seen = recordCallers();
    for (const caller of ['gateway', 'admin'] as const) {
      const c = client(running.address, {}, caller);
      try {
        assert.equal((await c.resolveApiKey({ keyHash: 'k' })).principal?.apiKeyId, 'k');
      } finally {
        c.close();
      }
    }
    assert.deepEqual(seen, ['gateway', 'admin']);
  });

  test('a service the method does not name is denied before the handler runs', async () => {
    const seen = recordCallers();
    for (const caller of ['log-export', 'policy', 'control-plane'] as const) {
      const c = client(running.address, {}, caller);
      try {
        const err = await rejection(c.resolveApiKey({ keyHash: 'k' }));
        assert.ok(err instanceof InternalError, `got ${err.name}`);
        assert.equal(
          err.message,
          `control-plane refused the call: ${SERVICE}.ResolveApiKey is not open to ${caller} (it serves gateway, admin).`,
        );
        assert.equal((err.cause as grpc.ServiceError).code, grpc.status.PERMISSION_DENIED);
      } finally {
        c.close();
      }
    }
    assert.deepEqual(seen, [], 'the handler never ran');
    const denied = running.log.lines().filter((l) => l.message === 'grpc call denied');
    assert.ok(denied.some((l) => l.caller === 'log-export' && l.method === `${SERVICE}.ResolveApiKey`));
  });

  test('a Forbidden thrown by the handler stays a 403, unlike a method closed to the caller', async () => {
    running.handler = async () => {
      throw new Forbidden('Not your organisation.');
    };
    const c = client(running.address);
    try {
      const err = await rejection(c.resolveApiKey({ keyHash: 'k' }));
      assert.ok(err instanceof Forbidden);
      assert.equal(err.message, 'Not your organisation.');
    } finally {
      c.close();
    }
  });

  test('without TLS or a token the named caller is taken at its word, but a call must name a known one', async () => {
    const seen = recordCallers();
    assert.equal(await rawCall(running.address, { 'x-switchyard-caller': 'gateway' }), grpc.status.OK);
    assert.equal(
      await rawCall(running.address, { 'x-switchyard-caller': 'log-export' }),
      grpc.status.PERMISSION_DENIED,
    );
    assert.equal(await rawCall(running.address, {}), grpc.status.UNAUTHENTICATED);
    assert.equal(
      await rawCall(running.address, { 'x-switchyard-caller': 'billing' }),
      grpc.status.UNAUTHENTICATED,
    );
    const anonymous = client(running.address, {}, null);
    try {
      const err = await rejection(anonymous.resolveApiKey({ keyHash: 'k' }));
      assert.ok(err instanceof ServiceUnavailable, `got ${err.name}`);
      assert.equal(err.message, "control-plane refused this service's credentials.");
    } finally {
      anonymous.close();
    }
    assert.deepEqual(seen, ['gateway'], 'only the call naming an allowed caller ran');
  });

  test('health checks need no calling service', async () => {
    await checkGrpcHealth({ address: running.address, target: 'control-plane', security: {} });
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

describe('gRPC replicas', () => {
  test('an address list is an ipv4:/ipv6: target; one address or a target with a scheme stays as it is', () => {
    assert.equal(channelTarget('policy:50051'), 'policy:50051');
    assert.equal(channelTarget('127.0.0.1:7001, 127.0.0.1:7002'), 'ipv4:127.0.0.1:7001,127.0.0.1:7002');
    assert.equal(channelTarget('[::1]:7001,[::1]:7002'), 'ipv6:[::1]:7001,[::1]:7002');
    assert.equal(channelTarget('dns:///policy-grpc:50051'), 'dns:///policy-grpc:50051');
    assert.throws(() => channelTarget('policy-a:1,policy-b:2'), /dns:\/\/\//);
    assert.throws(() => channelTarget('127.0.0.1,127.0.0.1:2'), /IP address and a port/);
    assert.throws(() => channelTarget('127.0.0.1:1,[::1]:2'), /all IPv4 or all IPv6/);
  });

  test('calls are spread over every replica in a list, and go on through the others when one stops', async (t) => {
    const [first, second] = [await startServer(), await startServer()];
    t.after(() => Promise.all([first.server.close(), second.server.close()]));
    const served: string[] = [];
    first.handler = async () => (served.push('first'), { principal: { apiKeyId: 'first' } });
    second.handler = async () => (served.push('second'), { principal: { apiKeyId: 'second' } });
    const c = client(`${first.address},${second.address}`);
    t.after(() => c.close());
    await c.waitForReady(3_000);
    for (let i = 0; i < 20; i++) await c.resolveApiKey({ keyHash: 'x' });
    assert.ok(served.includes('first') && served.includes('second'), `served by ${[...new Set(served)]}`);
    await first.server.close();
    served.length = 0;
    let failed = 0;
    for (let i = 0; i < 20; i++) await c.resolveApiKey({ keyHash: 'x' }).catch(() => failed++);
    // A call on its way to the stopped replica when it stopped may fail; the rest go to the other.
    assert.ok(failed <= 1, `${failed} calls failed`);
    assert.deepEqual(new Set(served), new Set(['second']));
  });
});

describe('gRPC connection age', () => {
  test('a client is asked to connect again once its connection is old, and its calls go on', async (t) => {
    const running = await startServer({}, { maxConnectionAgeMs: 300 });
    // Connections are counted where they arrive: through a relay in front of the server.
    const relay = new TcpRelay({ host: '127.0.0.1', port: running.port });
    await relay.start();
    const c = client(`127.0.0.1:${relay.port}`);
    t.after(async () => {
      c.close();
      await relay.stop();
      await running.server.close();
    });
    for (let i = 0; i < 12; i++) {
      assert.equal((await c.resolveApiKey({ keyHash: 'x' })).principal?.apiKeyId, 'key-for-x');
      await sleep(100);
    }
    assert.ok(
      relay.connections >= 2,
      `${relay.connections} connection(s) in 1.2 s with connections aged 300 ms`,
    );
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

  test("each service's token is its own: a caller header with another service's token is refused", async () => {
    const secret = 'shared-service-token';
    const as = (caller: string, token: string) =>
      rawCall(running.address, { 'x-switchyard-caller': caller, authorization: `Bearer ${token}` });
    assert.equal(await as('gateway', callerToken(secret, 'gateway')), grpc.status.OK);
    assert.equal(await as('admin', callerToken(secret, 'gateway')), grpc.status.UNAUTHENTICATED);
    assert.equal(await as('gateway', callerToken(secret, 'admin')), grpc.status.UNAUTHENTICATED);
    assert.equal(
      await as('gateway', secret),
      grpc.status.UNAUTHENTICATED,
      'the shared secret itself is no token',
    );
    assert.equal(await as('gateway', callerToken('another-secret', 'gateway')), grpc.status.UNAUTHENTICATED);
    assert.equal(
      await as('billing', callerToken(secret, 'billing' as ServiceName)),
      grpc.status.UNAUTHENTICATED,
    );
    assert.equal(
      await rawCall(running.address, { authorization: `Bearer ${callerToken(secret, 'gateway')}` }),
      grpc.status.UNAUTHENTICATED,
      'a token without the caller it was made for',
    );
  });

  test('a service proven by its token is still held to the rules', async () => {
    const c = client(running.address, { authToken: 'shared-service-token' }, 'log-export');
    try {
      const err = await rejection(c.resolveApiKey({ keyHash: 'k' }));
      assert.equal((err.cause as grpc.ServiceError).code, grpc.status.PERMISSION_DENIED);
    } finally {
      c.close();
    }
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
    // Certificates named after a service prove it; "client" names none (one shared certificate).
    issue('gateway', 'ca', 'extendedKeyUsage=clientAuth\n');
    issue('admin', 'ca', 'extendedKeyUsage=clientAuth\n');
    issue('client', 'ca', 'extendedKeyUsage=clientAuth\n');
    issue('intruder', 'rogue-ca', 'extendedKeyUsage=clientAuth\n');
    running = await startServer(tls('server'));
  });
  after(async () => {
    await running?.server.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('a client whose certificate names a service is served as that service', async () => {
    let caller: ServiceName | undefined;
    running.handler = async (request, context) => {
      caller = context.caller;
      return { principal: { apiKeyId: `key-for-${request.keyHash}` } };
    };
    const c = client(tlsAddress(), tls('gateway'), 'gateway');
    try {
      assert.equal((await c.resolveApiKey({ keyHash: 'k' })).principal?.apiKeyId, 'key-for-k');
      assert.equal(caller, 'gateway');
    } finally {
      c.close();
    }
  });

  test('the certificate decides the caller: a method closed to it is denied, a different claim refused', async () => {
    const admin = client(tlsAddress(), tls('admin'), 'admin');
    const claimsGateway = client(tlsAddress(), tls('admin'), 'gateway');
    try {
      assert.ok((await admin.resolveApiKey({ keyHash: 'k' })).principal);
      const denied = await rejection(admin.resolveWorkspace({ organisation: 'o', workspace: 'w' }));
      assert.equal((denied.cause as grpc.ServiceError).code, grpc.status.PERMISSION_DENIED);
      assert.match(denied.message, /ResolveWorkspace is not open to admin/);
      const refused = await rejection(claimsGateway.resolveWorkspace({ organisation: 'o', workspace: 'w' }));
      assert.equal((refused.cause as grpc.ServiceError).code, grpc.status.UNAUTHENTICATED);
      assert.match(String((refused.cause as grpc.ServiceError).details), /certificate names admin/);
    } finally {
      admin.close();
      claimsGateway.close();
    }
  });

  test('a certificate naming no service proves nothing without a token, yet health checks answer', async () => {
    const c = client(tlsAddress(), tls('client'), 'gateway');
    try {
      const err = await rejection(c.resolveApiKey({ keyHash: 'k' }));
      assert.equal((err.cause as grpc.ServiceError).code, grpc.status.UNAUTHENTICATED);
    } finally {
      c.close();
    }
    await checkGrpcHealth({ address: tlsAddress(), target: 'control-plane', security: tls('client') });
  });

  test('with TLS and a token, a shared certificate falls back to the token, a named one does not', async (t) => {
    const secret = 'shared-service-token';
    const both = await startServer({ ...tls('server'), authToken: secret });
    t.after(() => both.server.close());
    const address = `localhost:${both.port}`;
    const shared = client(address, { ...tls('client'), authToken: secret }, 'gateway');
    const adminPosingAsGateway = client(address, { ...tls('admin'), authToken: secret }, 'gateway');
    try {
      assert.ok((await shared.resolveWorkspace({ organisation: 'o', workspace: 'w' })) !== undefined);
      const err = await rejection(
        adminPosingAsGateway.resolveWorkspace({ organisation: 'o', workspace: 'w' }),
      );
      assert.equal((err.cause as grpc.ServiceError).code, grpc.status.UNAUTHENTICATED);
    } finally {
      shared.close();
      adminPosingAsGateway.close();
    }
  });

  test('start-up refuses a certificate that cannot prove the service it runs', () => {
    assert.doesNotThrow(() => checkCallerIdentity(tls('gateway'), 'gateway'));
    assert.throws(
      () => checkCallerIdentity(tls('admin'), 'gateway'),
      (err: unknown) =>
        err instanceof ConfigError && /GRPC_TLS_CERT_FILE: the certificate names admin/.test(err.message),
    );
    assert.throws(
      () => checkCallerIdentity(tls('client'), 'gateway'),
      (err: unknown) =>
        err instanceof ConfigError && /names no service .*set GRPC_AUTH_TOKEN/.test(err.message),
    );
    assert.doesNotThrow(() => checkCallerIdentity({ ...tls('client'), authToken: 'secret' }, 'gateway'));
    assert.doesNotThrow(() => checkCallerIdentity({}, 'gateway'));
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
