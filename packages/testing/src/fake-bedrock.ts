import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Sha256 } from '@aws-crypto/sha256-js';
import { EventStreamCodec } from '@smithy/core/event-streams';
import { fromUtf8, toUtf8 } from '@smithy/core/serde';
import { SignatureV4 } from '@smithy/signature-v4';
import { startFakeServer, type RecordedRequest } from './fake-server.ts';
import { FAKE_STRUCTURED_TEXT } from './fake-structured.ts';

/** The credentials a fake Bedrock accepts unless told otherwise. */
export const fakeAwsCredentials = {
  region: 'us-east-1',
  accessKeyId: 'AKIAFAKEBEDROCK00001',
  secretAccessKey: 'fake-bedrock-secret-access-key',
} as const;

export interface FakeBedrockOptions {
  region?: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  /** When set, requests must carry (and sign) this `x-amz-security-token`. */
  sessionToken?: string;
  /** When set, `Authorization: Bearer <apiKey>` (a Bedrock API key) is accepted too. */
  apiKey?: string;
  port?: number;
}

export interface FakeBedrock {
  /** The endpoint an integration's custom_host points at (in place of bedrock-runtime.<region>.amazonaws.com). */
  url: string;
  requests: RecordedRequest[];
  /** Requests whose client went away before the answer was complete. */
  aborted: number;
  close(): Promise<void>;
}

type Config = Omit<FakeBedrockOptions, 'port'> & {
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
};
type Block = Record<string, unknown>;
interface Turn {
  role: string;
  content: Block[];
}

const EXCEPTIONS: Record<number, string> = {
  400: 'ValidationException',
  403: 'AccessDeniedException',
  404: 'ResourceNotFoundException',
  408: 'ModelTimeoutException',
  424: 'ModelErrorException',
  429: 'ThrottlingException',
  500: 'InternalServerException',
  503: 'ServiceUnavailableException',
};

const REQUEST_FIELDS = new Set([
  'messages',
  'system',
  'inferenceConfig',
  'toolConfig',
  'guardrailConfig',
  'additionalModelRequestFields',
  'additionalModelResponseFieldPaths',
  'promptVariables',
  'requestMetadata',
  'performanceConfig',
  'outputConfig',
]);

/**
 * A loopback stand-in for the Bedrock Runtime Converse API. Every request must be signed with
 * SigV4 for service `bedrock` with the known credentials: the signature is recomputed with the
 * same signing library, and a wrong one is a 403 as AWS answers it. Streams are real binary
 * `application/vnd.amazon.eventstream` frames, written in pieces that straddle frame boundaries.
 * The model id picks a scenario:
 *   anything           end_turn with "Echo: <last user text>"
 *   tool-use           a text block and two get_weather toolUse blocks, stopReason tool_use
 *   reasoning          reasoningText with a signature, a redacted block, then text
 *   guardrail          stopReason guardrail_intervened
 *   max-tokens         stopReason max_tokens
 *   cached             usage with cacheReadInputTokens
 *   error-<status>     that HTTP status with `{message}` and x-amzn-ErrorType (429 adds retry-after: 3)
 *   stream-throttled   (converse-stream) some text, then a throttlingException frame
 *   stream-model-error (converse-stream) some text, then a modelStreamErrorException frame
 *   hang               never answers
 * A request with outputConfig.textFormat (a json_schema whose schema is a JSON string) is answered
 * FAKE_STRUCTURED_TEXT.
 */
export async function startFakeBedrock(options: FakeBedrockOptions = {}): Promise<FakeBedrock> {
  const config: Config = { ...fakeAwsCredentials, ...options };
  const state = await startFakeServer<FakeBedrock>(
    (req, res, body, s) => handle(req, res, body, s, config),
    options.port ?? 0,
  );
  return state;
}

function sendError(res: ServerResponse, status: number, type: string, message: string): void {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-amzn-requestid': randomUUID(),
    'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
  };
  if (status === 429) headers['retry-after'] = '3';
  res.writeHead(status, headers);
  res.end(JSON.stringify({ message }));
}

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/,\s]+)\/(\d{8})\/([^/,\s]+)\/([^/,\s]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/;

/** Why the request's authentication fails, as AWS would say it; undefined when it is valid. */
async function authFailure(
  req: IncomingMessage,
  raw: string,
  config: Config,
): Promise<[string, string] | undefined> {
  const authorization = req.headers.authorization ?? '';
  if (config.apiKey && authorization === `Bearer ${config.apiKey}`) return undefined;
  const match = AUTHORIZATION.exec(authorization);
  if (!match) {
    return [
      'IncompleteSignatureException',
      `Authorization header is not a valid AWS4-HMAC-SHA256 signature.`,
    ];
  }
  const [, accessKeyId, day, region, service, signedHeaderList, signature] = match;
  if (accessKeyId !== config.accessKeyId) {
    return ['UnrecognizedClientException', 'The security token included in the request is invalid.'];
  }
  if (service !== 'bedrock') {
    return ['InvalidSignatureException', `Credential should be scoped to correct service: 'bedrock'.`];
  }
  if (region !== config.region) {
    return ['InvalidSignatureException', `Credential should be scoped to a valid region, not '${region}'.`];
  }
  const signedHeaders = signedHeaderList!.split(';');
  const amzDate = String(req.headers['x-amz-date'] ?? '');
  if (!signedHeaders.includes('host') || !signedHeaders.includes('x-amz-date') || !amzDate.startsWith(day!)) {
    return [
      'IncompleteSignatureException',
      'The host and x-amz-date headers must be signed, on the scope date.',
    ];
  }
  if (config.sessionToken) {
    if (req.headers['x-amz-security-token'] !== config.sessionToken) {
      return ['UnrecognizedClientException', 'The security token included in the request is invalid.'];
    }
    if (!signedHeaders.includes('x-amz-security-token')) {
      return ['IncompleteSignatureException', 'The x-amz-security-token header must be signed.'];
    }
  }
  const headers = Object.fromEntries(signedHeaders.map((name) => [name, String(req.headers[name] ?? '')]));
  const [path, query = ''] = (req.url ?? '/').split('?');
  const signer = new SignatureV4({
    service: 'bedrock',
    region: config.region,
    credentials: {
      accessKeyId: config.accessKeyId,
      secretAccessKey: config.secretAccessKey,
      ...(config.sessionToken ? { sessionToken: config.sessionToken } : {}),
    },
    sha256: Sha256,
    applyChecksum: false,
  });
  const signingDate = new Date(
    amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'),
  );
  const expected = await signer.sign(
    {
      method: req.method ?? 'POST',
      protocol: 'http:',
      hostname: String(req.headers.host ?? '').replace(/:\d+$/, ''),
      path: path!,
      query: Object.fromEntries(new URLSearchParams(query)),
      headers,
      body: raw,
    },
    { signingDate },
  );
  if (!String(expected.headers.authorization).endsWith(`Signature=${signature}`)) {
    return [
      'InvalidSignatureException',
      'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.',
    ];
  }
  return undefined;
}

/** What real Bedrock rejects, so that a translation mistake fails the test rather than passing silently. */
function validationFailure(body: Record<string, unknown>): string | undefined {
  for (const key of Object.keys(body)) {
    if (!REQUEST_FIELDS.has(key)) return `Malformed input request: extraneous key [${key}] is not permitted.`;
  }
  const format = (body.outputConfig as { textFormat?: Record<string, unknown> } | undefined)?.textFormat;
  if (body.outputConfig !== undefined) {
    const schema = (format?.structure as { jsonSchema?: { schema?: unknown } } | undefined)?.jsonSchema
      ?.schema;
    if (format?.type !== 'json_schema' || typeof schema !== 'string') {
      return 'outputConfig.textFormat must be a json_schema whose structure.jsonSchema.schema is a string.';
    }
    try {
      JSON.parse(schema);
    } catch {
      return 'outputConfig.textFormat.structure.jsonSchema.schema is not valid JSON.';
    }
  }
  const messages = body.messages as Turn[] | undefined;
  if (!Array.isArray(messages) || messages.length === 0) return 'The messages field is required.';
  for (const [i, turn] of messages.entries()) {
    if (turn.role !== (i % 2 === 0 ? 'user' : 'assistant')) {
      return 'A conversation must start with a user message and alternate between user and assistant roles.';
    }
    if (!Array.isArray(turn.content) || turn.content.length === 0) {
      return `The content field in message ${i} is empty.`;
    }
    if (turn.content.some((block) => Object.keys(block).length !== 1)) {
      return `A content block in message ${i} must set exactly one member.`;
    }
  }
  return undefined;
}

function lastUserText(messages: Turn[]): string {
  const last = [...messages].reverse().find((m) => m.role === 'user');
  return (last?.content ?? [])
    .map((block) => (typeof block.text === 'string' ? block.text : block.image ? '[image]' : ''))
    .filter(Boolean)
    .join(' ');
}

interface Answer {
  content: Block[];
  stopReason: string;
  usage: Record<string, number>;
}

function answerFor(model: string, messages: Turn[], structured: boolean): Answer {
  const usage: Record<string, number> = { inputTokens: 9, outputTokens: 3, totalTokens: 12 };
  const echo = { text: `Echo: ${lastUserText(messages)}` };
  switch (model) {
    case 'tool-use':
      return {
        content: [
          { text: 'Let me check.' },
          { toolUse: { toolUseId: 'tooluse_fake_1', name: 'get_weather', input: { city: 'Paris' } } },
          { toolUse: { toolUseId: 'tooluse_fake_2', name: 'get_weather', input: { city: 'Tokyo' } } },
        ],
        stopReason: 'tool_use',
        usage,
      };
    case 'reasoning':
      return {
        content: [
          { reasoningContent: { reasoningText: { text: 'The user greets me.', signature: 'sig-fake-1' } } },
          { reasoningContent: { redactedContent: 'cmVkYWN0ZWQ=' } },
          echo,
        ],
        stopReason: 'end_turn',
        usage,
      };
    case 'guardrail':
      return {
        content: [{ text: 'Sorry, I cannot help with that.' }],
        stopReason: 'guardrail_intervened',
        usage,
      };
    case 'max-tokens':
      return { content: [echo], stopReason: 'max_tokens', usage };
    case 'cached':
      return { content: [echo], stopReason: 'end_turn', usage: { ...usage, cacheReadInputTokens: 4 } };
    default:
      return { content: [structured ? { text: FAKE_STRUCTURED_TEXT } : echo], stopReason: 'end_turn', usage };
  }
}

async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  raw: string,
  state: FakeBedrock,
  config: Config,
): Promise<void> {
  const failure = await authFailure(req, raw, config);
  if (failure) {
    sendError(res, 403, failure[0], failure[1]);
    return;
  }
  const route = /^\/model\/([^/?]+)\/(converse|converse-stream)$/.exec(req.url ?? '');
  if (req.method !== 'POST' || !route) {
    sendError(res, 404, 'UnknownOperationException', `Unknown operation: ${req.method} ${req.url}.`);
    return;
  }
  const model = decodeURIComponent(route[1]!);
  const stream = route[2] === 'converse-stream';
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(raw) as Record<string, unknown>;
  } catch {
    sendError(res, 400, 'SerializationException', 'The request body is not valid JSON.');
    return;
  }
  const invalid = validationFailure(body);
  if (invalid) {
    sendError(res, 400, 'ValidationException', invalid);
    return;
  }
  const status = /^error-(\d{3})$/.exec(model);
  if (status) {
    const code = Number(status[1]);
    sendError(res, code, EXCEPTIONS[code] ?? 'InternalServerException', `Simulated error ${code}.`);
    return;
  }
  res.on('close', () => {
    if (!res.writableFinished) state.aborted++;
  });
  if (model === 'hang') return;
  const messages = body.messages as Turn[];
  const requestId = randomUUID();
  if (!stream) {
    const answer = answerFor(model, messages, body.outputConfig !== undefined);
    res.writeHead(200, { 'content-type': 'application/json', 'x-amzn-requestid': requestId });
    res.end(
      JSON.stringify({
        output: { message: { role: 'assistant', content: answer.content } },
        stopReason: answer.stopReason,
        usage: answer.usage,
        metrics: { latencyMs: 42 },
      }),
    );
    return;
  }
  res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': requestId });
  const bytes = Buffer.concat(streamFrames(model, messages, body.outputConfig !== undefined));
  // Odd-sized writes, so frames arrive split across reads as they do over a real network.
  for (let offset = 0; offset < bytes.length; offset += 61) {
    if (res.destroyed) return;
    res.write(bytes.subarray(offset, offset + 61));
    await new Promise((resolve) => setImmediate(resolve));
  }
  res.end();
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);
const PADDING = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

function eventFrame(type: string, payload: Record<string, unknown>): Uint8Array {
  const padded = { ...payload, p: PADDING.slice(0, 5 + (type.length % 17)) };
  return codec.encode({
    headers: {
      ':event-type': { type: 'string', value: type },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'event' },
    },
    body: fromUtf8(JSON.stringify(padded)),
  });
}

function exceptionFrame(type: string, message: string): Uint8Array {
  return codec.encode({
    headers: {
      ':exception-type': { type: 'string', value: type },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'exception' },
    },
    body: fromUtf8(JSON.stringify({ message })),
  });
}

/** The ConverseStream frames for a scenario, as Bedrock sends them. */
function streamFrames(model: string, messages: Turn[], structured: boolean): Uint8Array[] {
  const frames: Uint8Array[] = [eventFrame('messageStart', { role: 'assistant' })];
  if (model === 'stream-throttled' || model === 'stream-model-error') {
    frames.push(eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Partial ' } }));
    frames.push(
      model === 'stream-throttled'
        ? exceptionFrame('throttlingException', 'Too many requests, please wait before trying again.')
        : exceptionFrame('modelStreamErrorException', 'The model stream failed.'),
    );
    return frames;
  }
  const answer = answerFor(model, messages, structured);
  answer.content.forEach((block, index) => {
    const contentBlockIndex = index;
    if (typeof block.text === 'string') {
      for (const piece of block.text.split(/(?<=\s)/)) {
        frames.push(eventFrame('contentBlockDelta', { contentBlockIndex, delta: { text: piece } }));
      }
    } else if (block.toolUse) {
      const { toolUseId, name, input } = block.toolUse as { toolUseId: string; name: string; input: unknown };
      frames.push(
        eventFrame('contentBlockStart', { contentBlockIndex, start: { toolUse: { toolUseId, name } } }),
      );
      const json = JSON.stringify(input);
      const half = Math.ceil(json.length / 2);
      for (const input of [json.slice(0, half), json.slice(half)]) {
        frames.push(eventFrame('contentBlockDelta', { contentBlockIndex, delta: { toolUse: { input } } }));
      }
    } else if (block.reasoningContent) {
      const reasoning = block.reasoningContent as {
        reasoningText?: { text: string; signature: string };
        redactedContent?: string;
      };
      if (reasoning.reasoningText) {
        const { text, signature } = reasoning.reasoningText;
        frames.push(
          eventFrame('contentBlockDelta', { contentBlockIndex, delta: { reasoningContent: { text } } }),
        );
        frames.push(
          eventFrame('contentBlockDelta', { contentBlockIndex, delta: { reasoningContent: { signature } } }),
        );
      } else {
        frames.push(
          eventFrame('contentBlockDelta', {
            contentBlockIndex,
            delta: { reasoningContent: { redactedContent: reasoning.redactedContent } },
          }),
        );
      }
    }
    frames.push(eventFrame('contentBlockStop', { contentBlockIndex }));
  });
  frames.push(eventFrame('messageStop', { stopReason: answer.stopReason }));
  frames.push(eventFrame('metadata', { usage: answer.usage, metrics: { latencyMs: 42 } }));
  return frames;
}
