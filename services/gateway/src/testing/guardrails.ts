import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { adminService } from '@switchyard/admin';
import { controlPlane } from '@switchyard/control-plane';
import { policyService } from '@switchyard/policy';
import type { ServiceDefinition } from '@switchyard/runtime';
import {
  startFakeOpenAi,
  startServiceHarness,
  type FakeOpenAi,
  type ServiceHarness,
} from '@switchyard/testing';
import { gatewayService } from '../service.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- request and response bodies, read field by field
export type Json = Record<string, any>;

export interface GuardrailHarness {
  h: ServiceHarness;
  /** The provider: a loopback OpenAI that echoes the last user message as `Echo: <message>`. */
  fake: FakeOpenAi;
  upstreamKey: string;
  /** A new guardrail of the organisation (or of the workspace `extra.workspace_id` names). */
  guardrail(
    checks: Json[],
    actions: Json,
    extra?: Json,
  ): Promise<{ id: string; slug: string; versionId: string }>;
  /** An inline config (`x-vendor-config`) routing to the fake provider through these guardrails. */
  config(guardrails: { input?: string[]; output?: string[] }): string;
  close(): Promise<void>;
}

/** The services a chat completion with guardrails goes through, and the fake provider behind them. */
export async function startGuardrailHarness(
  options: { upstreamKey?: string; services?: ServiceDefinition[] } = {},
): Promise<GuardrailHarness> {
  const upstreamKey = options.upstreamKey ?? 'sk-guardrail-upstream-0123456789';
  const fake = await startFakeOpenAi({ apiKey: upstreamKey });
  const h = await startServiceHarness({
    services:
      options.services ??
      ([controlPlane, policyService, adminService, gatewayService] as ServiceDefinition[]),
    env: { TRUSTED_CUSTOM_HOSTS: '127.0.0.1' },
  });
  return {
    h,
    fake,
    upstreamKey,
    async guardrail(checks, actions, extra = {}) {
      const created = await h.request('POST', '/v1/guardrails', {
        key: h.adminKey,
        json: { name: `g ${Math.random().toString(16).slice(2, 8)}`, checks, actions, ...extra },
      });
      assert.equal(created.status, 200, created.text);
      const { id, slug, version_id: versionId } = created.body as Json;
      return { id, slug, versionId };
    },
    config: (guardrails) =>
      JSON.stringify({
        provider: 'openai',
        custom_host: fake.baseUrl,
        api_key: upstreamKey,
        input_guardrails: guardrails.input ?? [],
        output_guardrails: guardrails.output ?? [],
      }),
    async close() {
      await h.close();
      await fake.close();
    },
  };
}

/** What a test webhook answers: a status and a body, after a pause if it is to be late. */
export interface WebhookReply {
  status?: number;
  body: unknown;
  delayMs?: number;
}

export interface TestWebhook {
  url: string;
  /** Each call's headers (lower-case names) and JSON body, in order. */
  calls: Array<{ headers: Record<string, string | string[] | undefined>; body: Json }>;
  /** What the next calls are answered (by default `{ verdict: true }`). */
  reply: (body: Json) => WebhookReply;
  close(): Promise<void>;
}

/** A guardrail webhook on loopback that records its calls and answers what `reply` says. */
export async function startWebhook(): Promise<TestWebhook> {
  const timers = new Set<NodeJS.Timeout>();
  const hook: TestWebhook = {
    url: '',
    calls: [],
    reply: () => ({ body: { verdict: true } }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Json;
      hook.calls.push({ headers: req.headers, body });
      const reply = hook.reply(body);
      const send = () => {
        res.writeHead(reply.status ?? 200, { 'content-type': 'application/json' });
        res.end(typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body));
      };
      if (reply.delayMs === undefined) send();
      else {
        const timer = setTimeout(() => {
          timers.delete(timer);
          if (!res.destroyed) send();
        }, reply.delayMs);
        timers.add(timer);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  hook.url = `http://127.0.0.1:${address.port}/verdict`;
  return hook;
}
