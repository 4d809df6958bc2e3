import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { providerRegistry, type ProviderFamily } from '@switchyard/rules';
import { adminService } from '@switchyard/admin';
import { controlPlane } from '@switchyard/control-plane';
import { policyService } from '@switchyard/policy';
import { FAKE_STRUCTURED_ANSWER, startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { gatewayService } from '../service.ts';
import { NO_UPSTREAM, familyFakes, type FamilyFake, type RunningFake } from '../providers/conformance-kit.ts';

// The client libraries people point at a gateway, each run as its users run it against one
// integration of every provider family, each integration in front of its family's fake upstream
// (providers/conformance-kit.ts): the official openai library for Node (in this process) and for
// Python, langchain-openai and LiteLLM's client (python/drive.py, in the venv that
// scripts/python-clients.sh makes). Every client makes the same checks where the family has the
// feature (chat, stream, tools, structured output, an upstream error, embeddings, the model list),
// and the same assertions apply to what each observed.

const PYTHON =
  process.env.SWITCHYARD_CLIENTS_PYTHON ??
  fileURLToPath(new URL('../../../../.data/python-clients/bin/python', import.meta.url));
const DRIVER = fileURLToPath(new URL('./python/drive.py', import.meta.url));
const PYTHON_CLIENTS = ['openai', 'langchain-openai', 'litellm'] as const;
type Client = 'openai-node' | (typeof PYTHON_CLIENTS)[number];
type Check = 'chat' | 'stream' | 'tools' | 'structured' | 'error' | 'embeddings' | 'models';

/** One integration of a provider family, and what the checks send to it. */
interface Target {
  family: ProviderFamily;
  providerId: string;
  slug: string;
  fake: FamilyFake | undefined;
  /** The model each check names (`@slug/model`); a check the family lacks is absent. */
  checks: Partial<Record<Check, { model: string; prompt?: string }>>;
  /** The answer's text for a prompt. */
  answer(prompt: string): string;
}

/** One provider of each family: the family's own where there is one. */
const targets: Target[] = [...new Set(providerRegistry.map((p) => p.family))].map((family) => {
  const provider =
    providerRegistry.find((p) => p.id === family) ?? providerRegistry.find((p) => p.family === family)!;
  const slug = `clients-${provider.id}`;
  const model = (name: string) => ({ model: `@${slug}/${name}` });
  const fake = familyFakes[family];
  if (fake === NO_UPSTREAM) {
    return {
      family,
      providerId: provider.id,
      slug,
      fake: undefined,
      checks: { chat: model('mock-1'), stream: model('mock-1'), models: model('mock-1') },
      answer: (prompt) => `Mock response to: ${prompt}`,
    };
  }
  const embeds = family === 'openai' || family === 'openai-compatible' || family === 'azure-openai';
  return {
    family,
    providerId: provider.id,
    slug,
    fake,
    checks: {
      chat: model(fake.models.answer),
      stream: model(fake.models.answer),
      tools: model(fake.models.toolCall),
      structured: model(fake.models.answer),
      error: model(fake.models.error),
      ...(embeds ? { embeddings: model('text-embedding-3-small') } : {}),
      // The gateway's catalog knows no models of a generic OpenAI-compatible host.
      ...(family === 'openai-compatible' ? {} : { models: model(fake.models.answer) }),
    },
    answer: (prompt) => `Echo: ${prompt}`,
  };
});

let h: ServiceHarness;
const running = new Map<FamilyFake, RunningFake>();

before(async () => {
  h = await startServiceHarness({ services: [controlPlane, policyService, adminService, gatewayService] });
  for (const target of targets) {
    let upstream: RunningFake | undefined;
    if (target.fake) {
      if (!running.has(target.fake)) running.set(target.fake, await target.fake.start());
      upstream = running.get(target.fake);
    }
    const res = await h.request('POST', '/admin/v2/integrations', {
      key: h.adminKey,
      json: {
        name: `Clients ${target.providerId}`,
        slug: target.slug,
        ai_provider_id: target.providerId,
        ...(upstream?.key === undefined ? {} : { key: upstream.key }),
        ...(upstream ? { configurations: upstream.configurations } : {}),
      },
    });
    assert.equal(res.status, 200, `${target.providerId}: ${res.text}`);
  }
});
after(async () => {
  await h?.close();
  for (const fake of running.values()) await fake.close();
});

const promptFor = (client: Client, target: Target) => `Hello from ${client} to ${target.providerId}`;

/** What a client saw for one check: what it answered, or the exception it raised. */
interface Observation {
  text?: string | null;
  finish_reason?: string | null;
  total_tokens?: number;
  chunks?: number;
  calls?: Array<{ name: string; arguments?: unknown }>;
  parsed?: unknown;
  count?: number;
  dimensions?: number;
  ids?: string[];
  exception?: string;
  /** Every class the exception is an instance of, as `library.Class`. */
  classes?: string[];
  status?: number;
  message?: string;
}

/** What a client observed for each check of each target, keyed `target` then `check`. */
type Observations = Record<string, Partial<Record<Check, Observation>>>;

/** The plan the Python driver reads: each target's checks, with the prompt of each. */
function planFor(client: Client) {
  return {
    client,
    base_url: `${h.url}/v1`,
    api_key: h.workspaceKey,
    targets: targets.map((target) => ({
      name: target.slug,
      checks: Object.fromEntries(
        Object.entries(target.checks).map(([check, spec]) => [
          check,
          { ...spec, prompt: promptFor(client, target) },
        ]),
      ),
    })),
  };
}

/** Runs the Python driver for one client; rejects when it cannot run or ends badly. */
function observePython(
  client: (typeof PYTHON_CLIENTS)[number],
): Promise<{ checks: Check[]; observations: Observations }> {
  if (!existsSync(PYTHON)) {
    throw new Error(`no Python client environment at ${PYTHON}: make it with bash scripts/python-clients.sh`);
  }
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, [DRIVER], {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        // Nothing leaves loopback: any other host goes to a proxy port where nothing listens.
        HTTP_PROXY: 'http://127.0.0.1:9',
        HTTPS_PROXY: 'http://127.0.0.1:9',
        NO_PROXY: '127.0.0.1,localhost,::1',
        LITELLM_LOCAL_MODEL_COST_MAP: 'True',
        LANGSMITH_TRACING: 'false',
        PYTHONDONTWRITEBYTECODE: '1',
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    const deadline = setTimeout(() => child.kill('SIGKILL'), 180_000);
    child.on('error', (error) => {
      clearTimeout(deadline);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(deadline);
      const stderr = Buffer.concat(err).toString();
      if (code !== 0) {
        reject(new Error(`${client}: the driver ended with ${signal ?? code}\n${stderr}`));
        return;
      }
      try {
        resolve(JSON.parse(Buffer.concat(out).toString()));
      } catch {
        reject(new Error(`${client}: the driver wrote no JSON\n${stderr}`));
      }
    });
    child.stdin.end(JSON.stringify(planFor(client)));
  });
}

/** The official openai library for Node, making the same checks in this process. */
async function observeNode(): Promise<{ checks: Check[]; observations: Observations }> {
  const client = new OpenAI({
    apiKey: h.workspaceKey,
    baseURL: `${h.url}/v1`,
    maxRetries: 0,
    timeout: 30_000,
  });
  const question = [{ role: 'user' as const, content: 'What is the weather in Paris?' }];
  const weatherTool = {
    type: 'function' as const,
    function: {
      name: 'get_weather',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  };
  const checks: Record<Check, (spec: { model: string; prompt: string }) => Promise<Observation>> = {
    async chat({ model, prompt }) {
      const completion = await client.chat.completions.create({
        model,
        messages: [{ role: 'user', content: prompt }],
      });
      const [choice] = completion.choices;
      return {
        text: choice!.message.content,
        finish_reason: choice!.finish_reason,
        total_tokens: completion.usage?.total_tokens,
      };
    },
    async stream({ model, prompt }) {
      const stream = await client.chat.completions.create({
        model,
        messages: [{ role: 'user', content: prompt }],
        stream: true,
        stream_options: { include_usage: true },
      });
      let text = '';
      let finish: string | null = null;
      let usage: number | undefined;
      let chunks = 0;
      for await (const chunk of stream) {
        chunks += 1;
        if (chunk.usage) usage = chunk.usage.total_tokens;
        for (const choice of chunk.choices) {
          text += choice.delta.content ?? '';
          finish = choice.finish_reason ?? finish;
        }
      }
      return { text, finish_reason: finish, total_tokens: usage, chunks };
    },
    async tools({ model }) {
      const completion = await client.chat.completions.create({
        model,
        messages: question,
        tools: [weatherTool],
      });
      const [choice] = completion.choices;
      return {
        finish_reason: choice!.finish_reason,
        calls: (choice!.message.tool_calls ?? []).map((call) =>
          call.type === 'function'
            ? { name: call.function.name, arguments: JSON.parse(call.function.arguments) }
            : { name: call.type },
        ),
      };
    },
    async structured({ model }) {
      const completion = await client.chat.completions.create({
        model,
        messages: question,
        response_format: {
          type: 'json_schema',
          json_schema: {
            name: 'Weather',
            strict: true,
            schema: {
              type: 'object',
              properties: { city: { type: 'string' }, temperature_c: { type: 'integer' } },
              required: ['city', 'temperature_c'],
              additionalProperties: false,
            },
          },
        },
      });
      return { parsed: JSON.parse(completion.choices[0]!.message.content ?? 'null') };
    },
    async error({ model }) {
      await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }] });
      return {}; // no error raised: the assertions on the error fail
    },
    async embeddings({ model }) {
      const result = await client.embeddings.create({ model, input: ['first text', 'second text'] });
      return { count: result.data.length, dimensions: result.data[0]!.embedding.length };
    },
    async models() {
      const ids: string[] = [];
      for await (const model of client.models.list()) ids.push(model.id);
      return { ids };
    },
  };
  const observations: Observations = {};
  for (const target of targets) {
    const seen: Observations[string] = (observations[target.slug] = {});
    for (const [check, spec] of Object.entries(target.checks) as Array<[Check, { model: string }]>) {
      try {
        seen[check] = await checks[check]({ ...spec, prompt: promptFor('openai-node', target) });
      } catch (err) {
        const error = err as Error & { status?: number };
        seen[check] = {
          exception: error.constructor.name,
          classes: classesOf(error),
          status: error.status,
          message: error.message,
        };
      }
    }
  }
  return { checks: Object.keys(checks) as Check[], observations };
}

/** The classes an error is an instance of, named as the Python driver names them. */
function classesOf(error: object): string[] {
  const names: string[] = [];
  for (let proto = Object.getPrototypeOf(error); proto; proto = Object.getPrototypeOf(proto)) {
    const name = (proto.constructor as { name: string }).name;
    names.push(error instanceof OpenAI.APIError ? `openai.${name}` : name);
  }
  return names;
}

/** The exception class each library raises for an HTTP status. */
const EXCEPTIONS: Record<number, string> = { 404: 'NotFoundError', 500: 'InternalServerError' };

for (const client of ['openai-node', ...PYTHON_CLIENTS] as const) {
  describe(`${client} in front of every provider family`, () => {
    let result: { checks: Check[]; observations: Observations };
    before(async () => {
      result = client === 'openai-node' ? await observeNode() : await observePython(client);
    });
    const observed = (target: Target, check: Check) => {
      const seen = result.observations[target.slug]?.[check];
      assert.ok(seen, `${client} reported nothing for ${target.slug} ${check}`);
      return seen;
    };
    /** The observation of a check that must succeed, with the library's error when it did not. */
    const answered = (target: Target, check: Check) => {
      const seen = observed(target, check);
      assert.equal(seen.exception, undefined, `${check} raised ${seen.exception}: ${seen.message}`);
      return seen;
    };

    for (const target of targets) {
      const has = (check: Check) => target.checks[check] !== undefined;
      describe(`${target.providerId} (${target.family})`, () => {
        test('chat: the answer, its finish reason and the token count', () => {
          const seen = answered(target, 'chat');
          assert.equal(seen.text, target.answer(promptFor(client, target)));
          assert.equal(seen.finish_reason, 'stop');
          assert.ok(Number(seen.total_tokens) > 0, `total_tokens ${seen.total_tokens}`);
        });

        test('stream: the answer in several chunks, ending with finish reason stop', () => {
          const seen = answered(target, 'stream');
          assert.equal(seen.text, target.answer(promptFor(client, target)));
          assert.equal(seen.finish_reason, 'stop');
          assert.ok((seen.chunks ?? 0) > 1, `${seen.chunks} chunks`);
          if ('total_tokens' in seen)
            assert.ok(Number(seen.total_tokens) > 0, `total_tokens ${seen.total_tokens}`);
        });

        if (has('tools')) {
          test('tools: a get_weather call with its arguments', () => {
            const seen = answered(target, 'tools');
            assert.equal(seen.finish_reason, 'tool_calls');
            assert.deepEqual(seen.calls?.[0], { name: 'get_weather', arguments: { city: 'Paris' } });
          });
        }

        if (has('structured')) {
          test('structured output: the answer parsed as the JSON schema asked', () => {
            assert.deepEqual(answered(target, 'structured').parsed, FAKE_STRUCTURED_ANSWER);
          });
        }

        if (has('error')) {
          test('an upstream error: the library’s error for that status, naming the provider', () => {
            const seen = observed(target, 'error');
            const status = target.fake!.errorStatus;
            assert.equal(seen.status, status, JSON.stringify(seen));
            const expected = `${client === 'litellm' ? 'litellm' : 'openai'}.${EXCEPTIONS[status]}`;
            assert.ok(seen.classes?.includes(expected), `${seen.exception} is not a ${expected}`);
            assert.ok(String(seen.message).includes(`${target.providerId} error: `), seen.message);
          });
        }

        if (has('embeddings')) {
          test('embeddings: one vector per input', () => {
            const seen = answered(target, 'embeddings');
            assert.deepEqual({ count: seen.count, dimensions: seen.dimensions }, { count: 2, dimensions: 3 });
          });
        }

        if (has('models') && libraryHas(client, 'models')) {
          test('models: the list names models of this integration, as @slug/model', () => {
            const seen = answered(target, 'models');
            const ours = (seen.ids as string[]).filter((id) => id.startsWith(`@${target.slug}/`));
            assert.ok(ours.length > 0, JSON.stringify(seen.ids));
          });
        }
      });
    }
  });
}

/** Whether a client library has a check at all (LangChain and LiteLLM list no models). */
function libraryHas(client: Client, check: Check): boolean {
  return !(check === 'models' && client !== 'openai' && client !== 'openai-node');
}
