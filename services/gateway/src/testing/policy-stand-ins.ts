import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer } from 'node:net';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { createLogger, sha256Hex } from '@switchyard/core';
import { randomUUID } from 'node:crypto';
import { scopesForKind, type Principal } from '@switchyard/access';
import { GrpcServer, type ClientName } from '@switchyard/runtime';
import { admin, identity, policy } from '@switchyard/proto';
import { startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { gatewayService } from '../service.ts';

// Stand-ins for the gateway's policy tests: a policy service and an identity service whose
// answers each test chooses, and an OpenAI-format upstream whose streams a test paces.

const logger = createLogger('test');
logger.silent = true;

/** A workspace service key of a new organisation, as the gateway sees its caller. */
export function newPrincipal(): Principal {
  return {
    apiKeyId: randomUUID(),
    organisationId: randomUUID(),
    workspaceId: randomUUID(),
    workspaceSlug: 'default',
    kind: 'workspace_service',
    scopes: [...scopesForKind('workspace_service')],
    expiresAt: null,
    userId: null,
    name: 'Test key',
    organisationCreatedAt: null,
  };
}

export type CheckAnswer = MessageInitShape<typeof policy.CheckResponseSchema>;
export type AccrueAnswer = MessageInitShape<typeof policy.AccrueResponseSchema>;

/** A policy service whose answers each test chooses; it records every call. */
export async function startPolicyStandIn() {
  const checks: policy.CheckRequest[] = [];
  const accruals: policy.AccrueRequest[] = [];
  /** How many settlements each Settle call carried. */
  const settleBatches: number[] = [];
  const state = {
    decide: (async () => ({ decision: policy.Decision.ALLOW })) as (
      r: policy.CheckRequest,
    ) => Promise<CheckAnswer>,
    accrue: (async (r) => ({ allowed: true, reservation: r.reservation })) as (
      r: policy.AccrueRequest,
    ) => Promise<AccrueAnswer>,
  };
  const server = new GrpcServer({ logger, security: {} });
  server.add(
    policy.PolicyService,
    {
      check: async (request) => {
        checks.push(request);
        return state.decide(request);
      },
      accrue: async (request) => {
        accruals.push(request);
        return state.accrue(request);
      },
      // Settlements arrive in batches; each is recorded as the final accrual it stands for.
      settle: async (request) => {
        accruals.push(...request.settlements);
        settleBatches.push(request.settlements.length);
        return {};
      },
    },
    { check: ['gateway'], accrue: ['gateway'], settle: ['gateway'] },
  );
  const port = await server.listen('127.0.0.1', 0);
  return {
    address: `127.0.0.1:${port}`,
    checks,
    accruals,
    settleBatches,
    state,
    close: () => server.close(),
  };
}
export type PolicyStandIn = Awaited<ReturnType<typeof startPolicyStandIn>>;

/** Answers for the keys given (a test may add more), so that the gateway can run without control-plane. */
export async function startIdentityStandIn(keys: Map<string, Principal>) {
  const server = new GrpcServer({ logger, security: {} });
  server.add(
    identity.IdentityService,
    {
      resolveApiKey: async ({ keyHash }) => {
        const principal = [...keys].find(([key]) => sha256Hex(key) === keyHash)?.[1];
        return !principal
          ? {}
          : {
              principal: {
                apiKeyId: principal.apiKeyId,
                organisationId: principal.organisationId,
                workspaceId: principal.workspaceId ?? '',
                workspaceSlug: principal.workspaceSlug ?? '',
                kind: identity.ApiKeyKind.WORKSPACE_SERVICE,
                name: principal.name,
                scopes: principal.scopes,
              },
            };
      },
      resolveWorkspace: async () => ({}),
      getKeySettings: async () => ({}),
      updateKeySettings: async () => ({}),
      provisionOrganisationUser: async () => ({}),
      removeOrganisationUser: async () => ({}),
      setWorkspaceMember: async () => ({}),
    },
    {
      resolveApiKey: ['gateway'],
      resolveWorkspace: ['gateway'],
      getKeySettings: ['gateway'],
      updateKeySettings: ['gateway'],
      provisionOrganisationUser: ['gateway'],
      removeOrganisationUser: ['gateway'],
      setWorkspaceMember: ['gateway'],
    },
  );
  const port = await server.listen('127.0.0.1', 0);
  return { address: `127.0.0.1:${port}`, close: () => server.close() };
}

/**
 * An admin that answers every organisation with no choices and no default guardrails: the
 * gateway refuses requests whose organisation's defaults it never read.
 */
export async function startOrganisationSettingsStandIn() {
  const server = new GrpcServer({ logger, security: {} });
  server.add(
    admin.OrganisationSettingsService,
    { getOrganisationSettings: async () => ({}) },
    { getOrganisationSettings: ['gateway'] },
  );
  const port = await server.listen('127.0.0.1', 0);
  return { address: `127.0.0.1:${port}`, close: () => server.close() };
}

/**
 * The gateway with a policy stand-in, an identity stand-in that knows `keys` and an
 * organisation settings stand-in; the other services it calls are nowhere (requests name
 * their provider inline). `close` stops them all.
 */
export async function startGatewayWithStandIns(
  keys: Map<string, Principal>,
  env?: Record<string, string>,
  /** Stand-ins of other services the test runs itself. */
  moreAddresses: Partial<Record<ClientName, string>> = {},
): Promise<{ h: ServiceHarness; standIn: PolicyStandIn; close: () => Promise<void> }> {
  const standIn = await startPolicyStandIn();
  const identityStandIn = await startIdentityStandIn(keys);
  const settingsStandIn = await startOrganisationSettingsStandIn();
  const stopStandIns = async () => {
    await standIn.close();
    await identityStandIn.close();
    await settingsStandIn.close();
  };
  try {
    const h = await startServiceHarness({
      services: [gatewayService],
      env,
      clientAddresses: {
        identity: identityStandIn.address,
        policy: standIn.address,
        integrations: await unusedAddress(),
        configs: await unusedAddress(),
        organisationSettings: settingsStandIn.address,
        ...moreAddresses,
      },
    });
    const close = async () => {
      await h.close();
      await stopStandIns();
    };
    return { h, standIn, close };
  } catch (err) {
    await stopStandIns();
    throw err;
  }
}

export async function unusedAddress(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return `127.0.0.1:${port}`;
}

/** One streamed answer in progress: the test sends its events one by one and sees whether the gateway hung up. */
export interface PacedStream {
  /** Writes one `data:` event with a chunk whose delta carries `content`. */
  content(text: string): void;
  /** Writes raw bytes. */
  raw(text: string): void;
  usage(usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number }): void;
  end(): void;
  /** Resolves when the gateway closed the connection before the answer ended. */
  closed: Promise<void>;
  readonly hungUp: boolean;
}

/**
 * An OpenAI-format upstream. A non-streamed request gets a completion with `usage`; a model
 * named `fail-once-<tag>` fails (500) on its first request. A streamed request is handed to
 * the test (`nextStream()`) to pace.
 */
export async function startScriptedUpstream(
  usage = { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 },
) {
  const requests: Array<Record<string, unknown>> = [];
  const waiting: Array<(s: PacedStream) => void> = [];
  const ready: PacedStream[] = [];
  const failed = new Set<string>();
  const server = createHttpServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (raw += d));
    req.on('end', () => {
      const body = JSON.parse(raw) as Record<string, unknown>;
      requests.push(body);
      const model = String(body.model);
      if (model.startsWith('fail-once-') && !failed.has(model)) {
        failed.add(model);
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            error: { message: 'Simulated failure.', type: 'server_error', param: null, code: null },
          }),
        );
        return;
      }
      const base = { id: 'chatcmpl-scripted', object: 'chat.completion.chunk', created: 1, model };
      if (!body.stream) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: 'chatcmpl-scripted',
            object: 'chat.completion',
            created: 1,
            model,
            choices: [
              {
                index: 0,
                message: { role: 'assistant', content: 'Hello!' },
                finish_reason: 'stop',
                logprobs: null,
              },
            ],
            usage,
          }),
        );
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.flushHeaders();
      let hungUp = false;
      const closed = new Promise<void>((resolve) =>
        res.on('close', () => {
          if (!res.writableFinished) {
            hungUp = true;
            resolve();
          }
        }),
      );
      const send = (value: unknown) => res.write(`data: ${JSON.stringify(value)}\n\n`);
      const stream: PacedStream = {
        content: (text) =>
          send({ ...base, choices: [{ index: 0, delta: { content: text }, finish_reason: null }] }),
        raw: (text) => res.write(text),
        usage: (u) => send({ ...base, choices: [], usage: u }),
        end: () => {
          send({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
          res.end('data: [DONE]\n\n');
        },
        closed,
        get hungUp() {
          return hungUp;
        },
      };
      const taker = waiting.shift();
      if (taker) taker(stream);
      else ready.push(stream);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    /** The next streamed request to arrive, for the test to pace. */
    nextStream(): Promise<PacedStream> {
      const stream = ready.shift();
      return stream ? Promise.resolve(stream) : new Promise((resolve) => waiting.push(resolve));
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
export type ScriptedUpstream = Awaited<ReturnType<typeof startScriptedUpstream>>;
