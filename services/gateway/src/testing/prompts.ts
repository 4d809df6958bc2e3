import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { fromBinary } from '@bufbuild/protobuf';
import { createLogger } from '@switchyard/core';
import { adminService } from '@switchyard/admin';
import { publishEvent, Topics } from '@switchyard/adapters';
import { controlPlane } from '@switchyard/control-plane';
import { policyService } from '@switchyard/policy';
import { events, prompts } from '@switchyard/proto';
import { GrpcServer, type ServiceDefinition } from '@switchyard/runtime';
import {
  startFakeOpenAi,
  startServiceHarness,
  type FakeOpenAi,
  type ServiceHarness,
} from '@switchyard/testing';
import { gatewayService } from '../service.ts';

// A gateway in front of a fake OpenAI (the saved integration `fake`), with a stand-in
// PromptDirectoryService the test fills in: for the tests of /v1/prompts/:id/completions.

const logger = createLogger('test');
logger.silent = true;

/** A prompt version as the directory answers it. */
export type PromptInit = Omit<prompts.PromptRoute, '$typeName' | '$unknown'>;

/** A PromptDirectoryService whose prompts each test sets; it records every request. */
export async function startPromptDirectoryStandIn() {
  const asked: prompts.GetPromptRequest[] = [];
  /** Prompt versions by `<id or slug>|<version>` ("" the default, "latest", or a number). */
  const stored = new Map<string, PromptInit>();
  const state = {
    /** `hang`: never answers; `fail`: answers with an internal error. */
    mode: 'answer' as 'answer' | 'hang' | 'fail',
    /** Answers with a prompt whatever organisation asks (a control-plane that failed to check). */
    leaky: false,
  };
  const server = new GrpcServer({ logger, security: {} });
  server.add(
    prompts.PromptDirectoryService,
    {
      getPrompt: async (request) => {
        asked.push(request);
        if (state.mode === 'hang') return new Promise<never>(() => {});
        if (state.mode === 'fail') throw new Error('the prompt store is down');
        const prompt = stored.get(`${request.idOrSlug}|${request.version}`);
        if (!prompt || (!state.leaky && prompt.organisationId !== request.organisationId)) return {};
        return { prompt };
      },
    },
    { getPrompt: ['gateway'] },
  );
  const port = await server.listen('127.0.0.1', 0);
  return { address: `127.0.0.1:${port}`, asked, stored, state, close: () => server.close() };
}

export type PromptDirectoryStandIn = Awaited<ReturnType<typeof startPromptDirectoryStandIn>>;

export interface PromptHarness {
  h: ServiceHarness;
  /** The provider behind the integration `fake`: it echoes the last user message as `Echo: <message>`. */
  fake: FakeOpenAi;
  directory: PromptDirectoryStandIn;
  /** Stores a prompt version of the harness's workspace under `<slug>|<version>` (and its id). */
  store(prompt: Partial<PromptInit> & { slug: string }, versions?: string[]): PromptInit;
  /** The request log events the gateway published. */
  requestLogs(): events.RequestLogEvent[];
  /** Publishes a change event of `entity` naming an organisation, as control-plane does. */
  changed(entity: string, organisationId: string): void;
  close(): Promise<void>;
}

/** Control-plane (integrations, guardrails), policy, admin and the gateway, with the prompt directory standing in. */
export async function startPromptHarness(): Promise<PromptHarness> {
  const upstreamKey = 'sk-prompt-upstream-0123456789';
  const fake = await startFakeOpenAi({ apiKey: upstreamKey });
  const directory = await startPromptDirectoryStandIn();
  let h: ServiceHarness;
  try {
    h = await startServiceHarness({
      services: [controlPlane, policyService, adminService, gatewayService] as ServiceDefinition[],
      clientAddresses: { promptDirectory: directory.address },
    });
  } catch (err) {
    await fake.close();
    await directory.close();
    throw err;
  }
  const created = await h.request('POST', '/admin/v2/integrations', {
    key: h.adminKey,
    json: {
      name: 'fake',
      slug: 'fake',
      ai_provider_id: 'openai',
      key: upstreamKey,
      configurations: { custom_host: fake.baseUrl },
    },
  });
  assert.equal(created.status, 200, created.text);
  return {
    h,
    fake,
    directory,
    store(prompt, versions = ['']) {
      const full: PromptInit = {
        id: randomUUID(),
        partials: {},
        partialVersionIds: {},
        name: prompt.slug,
        organisationId: h.organisationId,
        workspaceId: h.workspaceId,
        versionId: randomUUID(),
        versionNumber: 1,
        model: 'gpt-x',
        virtualKey: 'fake',
        parametersJson: '{}',
        template: 'Hello',
        ...prompt,
      };
      for (const version of versions) {
        directory.stored.set(`${full.slug}|${version}`, full);
        directory.stored.set(`${full.id}|${version}`, full);
      }
      return full;
    },
    requestLogs: () =>
      h.bus.log(Topics.requestLogs).map((message) => fromBinary(events.RequestLogEventSchema, message.value)),
    changed(entity, organisationId) {
      publishEvent(h.bus, Topics.changes, events.ChangeEventSchema, organisationId, {
        id: randomUUID(),
        entity,
        entityId: randomUUID(),
        organisationId,
        workspaceId: h.workspaceId,
        occurredAtMs: String(Date.now()),
      });
    },
    async close() {
      await h.close();
      await fake.close();
      await directory.close();
    },
  };
}
