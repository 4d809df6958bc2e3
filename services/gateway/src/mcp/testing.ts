import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express, { type RequestHandler } from 'express';
import { Agent } from 'undici';
import { Registry } from 'prom-client';
import { create, fromBinary, type MessageInitShape } from '@bufbuild/protobuf';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Unauthorized, createLogger } from '@switchyard/core';
import { bearerToken, type Principal } from '@switchyard/access';
import type { EventBus, OutgoingMessage } from '@switchyard/adapters';
import { MemoryKeyValueStore, Topics } from '@switchyard/adapters';
import { ScopedRouter } from '@switchyard/runtime';
import { events, mcp } from '@switchyard/proto';
import { parseGuardrailActions, parseGuardrailChecks } from '@switchyard/guardrails';
import type { LoadedGuardrail } from '../domain/guardrails.ts';
import type { PolicyCheck, PolicyCheckRequest } from '../domain/ports.ts';
import { SKIPPED_HOLD, type PolicyHold } from '../domain/policy.ts';
import { GatewayMetrics } from '../metrics/gateway-metrics.ts';
import { McpGateway } from './gateway.ts';
import { McpSessions } from './sessions.ts';
import { newPrincipal } from '../testing/policy-stand-ins.ts';
import { mcpRoutes } from './routes.ts';

// The MCP gateway's routes on loopback with stand-ins for what the gateway reads from other
// services: an in-memory MCP directory, a policy check each test decides, in-memory
// guardrails, and an event bus that keeps what was published.

const logger = createLogger('test');
logger.silent = true;

/** A server route as a test writes it (plain fields, nested messages as plain objects). */
export type ServerInit = Exclude<MessageInitShape<typeof mcp.McpServerRouteSchema>, mcp.McpServerRoute>;

/** A workspace key with `agents.invoke`, as the gateway sees its caller. */
export function mcpPrincipal(overrides: Partial<Principal> = {}): Principal {
  return { ...newPrincipal(), organisationId: 'org-1', workspaceId: 'ws-1', ...overrides };
}

/** A guardrail as the directory would load it. */
export function loadedGuardrail(
  id: string,
  checks: unknown[],
  actions: Record<string, unknown>,
): LoadedGuardrail {
  return {
    id,
    slug: id,
    workspaceId: '',
    versionId: `${id}-v1`,
    name: id,
    checks: parseGuardrailChecks(checks, 'checks'),
    actions: parseGuardrailActions(actions, 'actions'),
  };
}

export interface McpTestGateway {
  url: string;
  /** The server route the directory answers for each slug (the test may change them). */
  servers: Map<string, ServerInit>;
  /** Callers by the token they send as `Authorization: Bearer`. */
  keys: Map<string, Principal>;
  guardrails: Map<string, LoadedGuardrail>;
  /** The policy checks asked, and what each test answers. */
  checks: PolicyCheckRequest[];
  settled: Array<{ cost: number } | undefined>;
  policy: { decide: (request: PolicyCheckRequest) => Promise<PolicyHold> };
  published: OutgoingMessage[];
  /** The request log events published, decoded. */
  requestLogs(): events.RequestLogEvent[];
  usageEvents(): events.UsageEvent[];
  metrics: Registry;
  /** An MCP client (the official SDK's) of `slug`, authenticated with `token`. */
  client(slug: string, token?: string, headers?: Record<string, string>): Promise<Client>;
  close(): Promise<void>;
}

export async function startMcpTestGateway(
  options: { requestTimeoutMs?: number; baseUrl?: string; issuer?: string; maxBody?: string } = {},
): Promise<McpTestGateway> {
  const servers = new Map<string, ServerInit>();
  const keys = new Map<string, Principal>();
  const guardrails = new Map<string, LoadedGuardrail>();
  const checks: PolicyCheckRequest[] = [];
  const settled: Array<{ cost: number } | undefined> = [];
  const published: OutgoingMessage[] = [];
  const policyState = { decide: async (_request: PolicyCheckRequest): Promise<PolicyHold> => SKIPPED_HOLD };
  const policy: PolicyCheck = {
    async check(request) {
      checks.push(request);
      const hold = await policyState.decide(request);
      return {
        ...hold,
        decision: hold.decision,
        settle: (used) => {
          settled.push(used === undefined ? undefined : { cost: used.cost });
          hold.settle(used);
        },
        adjustments: () => hold.adjustments(),
      };
    },
  };
  const bus = { publish: (message: OutgoingMessage) => published.push(message) } as unknown as EventBus;
  const registry = new Registry();
  const dispatcher = new Agent();
  const gateway = new McpGateway({
    servers: {
      find: async (organisationId, slug) => {
        const found = servers.get(slug);
        return found && (found.organisationId ?? 'org-1') === organisationId
          ? create(mcp.McpServerRouteSchema, { organisationId: 'org-1', workspaceId: 'ws-1', ...found })
          : null;
      },
    },
    policy,
    guardrails: {
      find: async (_organisationId, _workspaceId, reference) => guardrails.get(reference),
    },
    bus,
    metrics: new GatewayMetrics(registry),
    logger,
    dispatcherFor: () => dispatcher,
    requestTimeoutMs: options.requestTimeoutMs ?? 5_000,
    headerPrefix: 'x-vendor-',
    sessions: new McpSessions(new MemoryKeyValueStore(), logger),
  });
  const authentication: RequestHandler = (req, _res, next) => {
    const token = bearerToken(req.headers.authorization);
    const principal = token ? keys.get(token) : undefined;
    if (!principal) {
      next(new Unauthorized('Missing or invalid API key or token.'));
      return;
    }
    req.principal = principal;
    next();
  };
  const router = new ScopedRouter();
  mcpRoutes(router, {
    gateway,
    authentication,
    maxBody: options.maxBody ?? '1mb',
    baseUrl: options.baseUrl,
    issuer: options.issuer,
  });
  const app = express();
  app.use(router.router);
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clients: Client[] = [];
  const decoded = <T>(topic: string, decode: (bytes: Uint8Array) => T) =>
    published.filter((m) => m.topic === topic).map((m) => decode(m.value as Uint8Array));
  return {
    url,
    servers,
    keys,
    guardrails,
    checks,
    settled,
    policy: policyState,
    published,
    requestLogs: () => decoded(Topics.requestLogs, (b) => fromBinary(events.RequestLogEventSchema, b)),
    usageEvents: () => decoded(Topics.usage, (b) => fromBinary(events.UsageEventSchema, b)),
    metrics: registry,
    async client(slug, token, headers = {}) {
      const client = new Client({ name: 'test-client', version: '1.0.0' });
      const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp/${slug}`), {
        requestInit: {
          headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
        },
      });
      await client.connect(transport);
      clients.push(client);
      return client;
    },
    async close() {
      await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await dispatcher.close();
    },
  };
}
