import type { IncomingHttpHeaders } from 'node:http';
import type { AuthKind, ProviderFamily } from '@switchyard/rules';
import {
  fakeAwsCredentials,
  startFakeAnthropic,
  startFakeAzureOpenAi,
  startFakeBedrock,
  startFakeGemini,
  startFakeOpenAi,
  type RecordedRequest,
} from '@switchyard/testing';

// The adapter conformance kit's fake upstreams, one per provider family: conformance.test.ts
// runs the same cases against every registered provider, each through the gateway to its
// family's fake. A family added to the registry without an entry here does not compile.

/** A running fake, and what an integration needs to reach it. */
export interface RunningFake {
  requests: RecordedRequest[];
  close(): Promise<void>;
  /** The key the fake accepts (none for a fake that takes AWS signatures). */
  key: string | undefined;
  /** The integration's configurations: at least the custom_host that points at the fake. */
  configurations: Record<string, unknown>;
}

export interface FamilyFake {
  start(): Promise<RunningFake>;
  /** The fake's scenarios (chosen by the model name) for the kit's cases. */
  models: {
    /** Answers `Echo: <last user text>` with finish_reason stop, streamed or not. */
    answer: string;
    /** Calls get_weather with `{"city":"Paris"}` first. */
    toolCall: string;
    /** An error other than 429, with `errorStatus`. */
    error: string;
    /** A 429 with a retry-after (or what the adapter turns into one). */
    rateLimited: string;
  };
  errorStatus: number;
  /** What the client must see for `rateLimited`: the retry-after, and the upstream's message. */
  rateLimited: { retryAfter: string; message: string };
}

/** For a family with no upstream to fake (the mock provider answers by itself). */
export const NO_UPSTREAM = 'no upstream';

const openAiKey = 'sk-conformance-0123456789';

/** The OpenAI fake serves OpenAI and the OpenAI-compatible family alike. */
const openAiFake: FamilyFake = {
  async start() {
    const fake = await startFakeOpenAi({ apiKey: openAiKey });
    return { ...bind(fake), key: openAiKey, configurations: { custom_host: fake.baseUrl } };
  },
  models: { answer: 'gpt-4o-mini', toolCall: 'tool-call', error: 'error-500', rateLimited: 'error-429' },
  errorStatus: 500,
  rateLimited: { retryAfter: '2', message: 'Simulated error 429.' },
};

export const familyFakes: Record<ProviderFamily, FamilyFake | typeof NO_UPSTREAM> = {
  openai: openAiFake,
  'openai-compatible': openAiFake,
  'azure-openai': {
    async start() {
      const key = 'azure-conformance-0123456789';
      const fake = await startFakeAzureOpenAi({ apiKey: key });
      // No deployment setting: the model names the deployment, and so the fake's scenario.
      return { ...bind(fake), key, configurations: { custom_host: fake.url, api_version: '2024-10-21' } };
    },
    models: {
      answer: 'gpt-4o',
      toolCall: 'tool-call',
      error: 'missing-deployment',
      rateLimited: 'error-429',
    },
    errorStatus: 404,
    rateLimited: {
      retryAfter: '6',
      message:
        'Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after 6 seconds.',
    },
  },
  anthropic: {
    async start() {
      const key = 'sk-ant-conformance-0123456789';
      const fake = await startFakeAnthropic({ apiKey: key });
      return { ...bind(fake), key, configurations: { custom_host: fake.baseUrl } };
    },
    models: {
      answer: 'claude-sonnet-4-5',
      toolCall: 'tool-use',
      error: 'error-500',
      rateLimited: 'error-429',
    },
    errorStatus: 500,
    rateLimited: { retryAfter: '7', message: 'Simulated error 429.' },
  },
  google: {
    async start() {
      const key = 'gemini-conformance-0123456789';
      const fake = await startFakeGemini({ apiKey: key });
      return { ...bind(fake), key, configurations: { custom_host: fake.baseUrl } };
    },
    models: {
      answer: 'gemini-2.5-flash',
      toolCall: 'function-call',
      error: 'error-500',
      rateLimited: 'error-429',
    },
    errorStatus: 500,
    // Gemini sends no retry-after: the adapter derives it from the error's RetryInfo (37s).
    rateLimited: { retryAfter: '37', message: 'Simulated error 429.' },
  },
  bedrock: {
    async start() {
      const fake = await startFakeBedrock();
      return {
        ...bind(fake),
        key: undefined,
        configurations: {
          custom_host: fake.url,
          aws_region: fakeAwsCredentials.region,
          aws_access_key_id: fakeAwsCredentials.accessKeyId,
          aws_secret_access_key: fakeAwsCredentials.secretAccessKey,
        },
      };
    },
    models: {
      answer: 'anthropic.claude-3-haiku-20240307-v1:0',
      toolCall: 'tool-use',
      error: 'error-500',
      rateLimited: 'error-429',
    },
    errorStatus: 500,
    rateLimited: { retryAfter: '3', message: 'Simulated error 429.' },
  },
  mock: NO_UPSTREAM,
};

/** What every fake has: the requests it received (the array it keeps adding to) and its close. */
function bind(fake: { requests: RecordedRequest[]; close(): Promise<void> }) {
  return { requests: fake.requests, close: () => fake.close() };
}

/** How an upstream request carried its credential, as a provider descriptor names it. */
export function authKindOf(headers: IncomingHttpHeaders, key: string | undefined): AuthKind {
  const authorization = headers.authorization ?? '';
  if (authorization.startsWith('AWS4-HMAC-SHA256 ')) return 'aws-sigv4';
  if (key !== undefined) {
    if (authorization === `Bearer ${key}`) return 'bearer';
    if (headers['api-key'] === key) return 'api-key';
    if (headers['x-api-key'] === key) return 'x-api-key';
    if (headers['x-goog-api-key'] === key) return 'x-goog-api-key';
  }
  return 'none';
}

/** The data of each server-sent event of a stream, in order. */
export function eventData(text: string): string[] {
  return text
    .split(/\r?\n\r?\n/)
    .map((event) =>
      event
        .split(/\r?\n/)
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice('data:'.length).trimStart())
        .join('\n'),
    )
    .filter(Boolean);
}
