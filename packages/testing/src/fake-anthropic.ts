import type { IncomingMessage, ServerResponse } from 'node:http';
import { startFakeServer, type RecordedRequest } from './fake-server.ts';
import { FAKE_STRUCTURED_TEXT } from './fake-structured.ts';

export interface FakeAnthropic {
  url: string;
  /** The base URL an integration uses: `<url>/v1`. */
  baseUrl: string;
  requests: RecordedRequest[];
  /** Requests whose client went away before the answer was complete. */
  aborted: number;
  close(): Promise<void>;
}

type Block =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

interface Scenario {
  content: Block[];
  stopReason: string;
  /** With a stream, fail with an `error` event after this many content blocks. */
  failAfterBlocks?: number;
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

export const FAKE_ANTHROPIC_USAGE = {
  input_tokens: 10,
  cache_creation_input_tokens: 2,
  cache_read_input_tokens: 3,
  output_tokens: 6,
};

/**
 * A loopback stand-in for Anthropic's Messages API (`POST /v1/messages`) speaking its wire
 * format: `x-api-key` and `anthropic-version` checked, the error envelope, and streams with
 * the real event sequence (`message_start`, block start/delta/stop, `ping`, `message_delta`,
 * `message_stop`). The model name picks a scenario:
 *   anything          a text answer echoing the last user message, its text blocks and plain-text
 *                     documents (stop_reason end_turn)
 *   tool-use          some text, then two tool_use blocks (stop_reason tool_use)
 *   thinking          a thinking block with a signature, a redacted_thinking block, then text
 *   max-tokens        stop_reason max_tokens
 *   refusal           stop_reason refusal
 *   stop-sequence     stop_reason stop_sequence, naming the request's first stop sequence
 *   stream-error      streamed: one text block, then an `error` event (overloaded_error)
 *   error-<status>    that HTTP status with Anthropic's error body (429 and 529 add retry-after)
 *   slow-stream       stream events 50 ms apart
 *   hang              never answers
 * Every usage is FAKE_ANTHROPIC_USAGE.
 */
export async function startFakeAnthropic(
  options: { apiKey?: string; port?: number } = {},
): Promise<FakeAnthropic> {
  const state = await startFakeServer<FakeAnthropic>(
    (req, res, body, s) => handle(req, res, body, s, options.apiKey),
    options.port ?? 0,
  );
  state.baseUrl = `${state.url}/v1`;
  return state;
}

/** The head Anthropic gives every answer, errors included: a request id, the organisation and its rate limits. */
const ANTHROPIC_HEAD = {
  'request-id': 'req_fake',
  'anthropic-organization-id': '00000000-0000-4000-8000-000000000000',
  'anthropic-ratelimit-requests-limit': '50',
  'anthropic-ratelimit-requests-remaining': '49',
  'anthropic-ratelimit-requests-reset': '2026-01-01T00:00:01Z',
  'anthropic-ratelimit-tokens-limit': '40000',
  'anthropic-ratelimit-tokens-remaining': '39000',
  'anthropic-ratelimit-tokens-reset': '2026-01-01T00:00:01Z',
};

function sendError(res: ServerResponse, status: number, message: string): void {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...ANTHROPIC_HEAD };
  if (status === 429 || status === 529) headers['retry-after'] = '7';
  res.writeHead(status, headers);
  res.end(
    JSON.stringify({
      type: 'error',
      error: { type: ERROR_TYPES[status] ?? 'api_error', message },
      request_id: 'req_fake',
    }),
  );
}

interface MessagesBody {
  model?: string;
  max_tokens?: number;
  messages?: Array<{ role: string; content: unknown }>;
  stop_sequences?: string[];
  stream?: boolean;
  output_config?: { format?: { type?: string; schema?: unknown } };
}

async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  raw: string,
  state: FakeAnthropic,
  apiKey: string | undefined,
): Promise<void> {
  if (apiKey && req.headers['x-api-key'] !== apiKey) {
    sendError(res, 401, 'invalid x-api-key');
    return;
  }
  if (req.method !== 'POST' || req.url !== '/v1/messages') {
    sendError(res, 404, `Not found: ${req.method} ${req.url}`);
    return;
  }
  if (!req.headers['anthropic-version']) {
    sendError(res, 400, 'anthropic-version: header is required');
    return;
  }
  let body: MessagesBody;
  try {
    body = JSON.parse(raw);
  } catch {
    sendError(res, 400, 'There was an issue with your request body: invalid JSON');
    return;
  }
  for (const field of ['model', 'max_tokens', 'messages'] as const) {
    if (body[field] === undefined) {
      sendError(res, 400, `${field}: Field required`);
      return;
    }
  }
  const model = body.model ?? '';
  const status = /^error-(\d{3})$/.exec(model);
  if (status) {
    sendError(res, Number(status[1]), `Simulated error ${status[1]}.`);
    return;
  }
  res.on('close', () => {
    if (!res.writableFinished) state.aborted++;
  });
  if (model === 'hang') return;

  const scenario = scenarioFor(model, body);
  const message = {
    id: `msg_fake_${state.requests.length}`,
    type: 'message',
    role: 'assistant',
    model,
    content: scenario.content,
    stop_reason: scenario.stopReason,
    stop_sequence: scenario.stopReason === 'stop_sequence' ? (body.stop_sequences?.[0] ?? null) : null,
    usage: { ...FAKE_ANTHROPIC_USAGE, service_tier: 'standard' },
  };
  if (!body.stream) {
    res.writeHead(200, { 'content-type': 'application/json', ...ANTHROPIC_HEAD });
    res.end(JSON.stringify(message));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...ANTHROPIC_HEAD });
  const pause = model === 'slow-stream' ? 50 : 0;
  const send = async (data: { type: string } & Record<string, unknown>) => {
    if (pause) await new Promise((r) => setTimeout(r, pause));
    if (!res.destroyed) res.write(`event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  await send({
    type: 'message_start',
    message: {
      ...message,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...message.usage, output_tokens: 1 },
    },
  });
  for (const [index, block] of scenario.content.entries()) {
    if (index === scenario.failAfterBlocks) {
      await send({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
      res.end();
      return;
    }
    for (const event of blockEvents(block, index)) await send(event);
    if (index === 0) await send({ type: 'ping' });
  }
  await send({
    type: 'message_delta',
    delta: { stop_reason: message.stop_reason, stop_sequence: message.stop_sequence },
    usage: { output_tokens: FAKE_ANTHROPIC_USAGE.output_tokens },
  });
  await send({ type: 'message_stop' });
  res.end();
}

function scenarioFor(model: string, body: MessagesBody): Scenario {
  const lastUser = [...(body.messages ?? [])].reverse().find((m) => m.role === 'user');
  const text = `Echo: ${typeof lastUser?.content === 'string' ? lastUser.content : blocksText(lastUser?.content)}`;
  switch (model) {
    case 'tool-use':
      return {
        content: [
          { type: 'text', text: 'Let me check.' },
          { type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'toolu_01B', name: 'get_time', input: { zone: 'Europe/Paris' } },
        ],
        stopReason: 'tool_use',
      };
    case 'thinking':
      return {
        content: [
          { type: 'thinking', thinking: 'Simple arithmetic: 2+2=4.', signature: 'EqQBCgIYAhIM1gbcDa9G' },
          { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix' },
          { type: 'text', text: 'The answer is 4.' },
        ],
        stopReason: 'end_turn',
      };
    case 'max-tokens':
      return { content: [{ type: 'text', text: 'The story begins' }], stopReason: 'max_tokens' };
    case 'refusal':
      return { content: [{ type: 'text', text: 'I cannot help with that.' }], stopReason: 'refusal' };
    case 'stop-sequence':
      return { content: [{ type: 'text', text: 'one two' }], stopReason: 'stop_sequence' };
    case 'stream-error':
      return {
        content: [
          { type: 'text', text },
          { type: 'text', text: 'never sent' },
        ],
        stopReason: 'end_turn',
        failAfterBlocks: 1,
      };
    default:
      if (body.output_config?.format?.type === 'json_schema') {
        return { content: [{ type: 'text', text: FAKE_STRUCTURED_TEXT }], stopReason: 'end_turn' };
      }
      return { content: [{ type: 'text', text }], stopReason: 'end_turn' };
  }
}

/** The text of a user turn's blocks: its text blocks and plain-text documents, else `[blocks]`. */
function blocksText(content: unknown): string {
  const texts = (Array.isArray(content) ? content : []).flatMap((block: Record<string, unknown> | null) => {
    if (block?.type === 'text' && typeof block.text === 'string') return [block.text];
    const source = block?.source as Record<string, unknown> | undefined;
    if (block?.type === 'document' && source?.type === 'text' && typeof source.data === 'string') {
      return [`[document: ${source.data}]`];
    }
    return [];
  });
  return texts.length > 0 ? texts.join(' ') : '[blocks]';
}

/** One block as the stream carries it: start with the block empty, deltas, stop. */
function blockEvents(block: Block, index: number): Array<{ type: string } & Record<string, unknown>> {
  const delta = (d: Record<string, unknown>) => ({ type: 'content_block_delta', index, delta: d });
  const start = (content_block: Record<string, unknown>) => ({
    type: 'content_block_start',
    index,
    content_block,
  });
  const stop = { type: 'content_block_stop', index };
  switch (block.type) {
    case 'text':
      return [
        start({ type: 'text', text: '' }),
        ...block.text.split(/(?<=\s)/).map((text) => delta({ type: 'text_delta', text })),
        stop,
      ];
    case 'thinking':
      return [
        start({ type: 'thinking', thinking: '', signature: '' }),
        ...block.thinking.split(/(?<=:)/).map((thinking) => delta({ type: 'thinking_delta', thinking })),
        delta({ type: 'signature_delta', signature: block.signature }),
        stop,
      ];
    case 'redacted_thinking':
      return [start(block), stop];
    case 'tool_use': {
      const json = JSON.stringify(block.input);
      const middle = Math.floor(json.length / 2);
      return [
        start({ type: 'tool_use', id: block.id, name: block.name, input: {} }),
        delta({ type: 'input_json_delta', partial_json: '' }),
        delta({ type: 'input_json_delta', partial_json: json.slice(0, middle) }),
        delta({ type: 'input_json_delta', partial_json: json.slice(middle) }),
        stop,
      ];
    }
  }
}
