import type { IncomingMessage, ServerResponse } from 'node:http';
import { startFakeServer, type RecordedRequest } from './fake-server.ts';
import { FAKE_STRUCTURED_TEXT } from './fake-structured.ts';

export type { RecordedRequest };

export interface FakeOpenAi {
  url: string;
  /** The base URL an OpenAI client or integration uses: `<url>/v1`. */
  baseUrl: string;
  requests: RecordedRequest[];
  /** Requests whose client went away before the answer was complete. */
  aborted: number;
  close(): Promise<void>;
}

/**
 * A loopback stand-in for the OpenAI API speaking its wire format. The model name picks a
 * scenario:
 *   anything          a normal completion echoing the last user message
 *   error-<status>    that HTTP status with an OpenAI error body (429 adds retry-after)
 *   fail-first-<n>[-tag]  503 for the first n requests with that exact model, then normal
 *   slow-stream       stream chunks 50 ms apart
 *   hang              never answers (to test timeouts and client aborts)
 *   tool-call         answers with a tool call
 * A request with a json_schema or json_object response_format is answered FAKE_STRUCTURED_TEXT.
 */
export async function startFakeOpenAi(options: { apiKey?: string; port?: number } = {}): Promise<FakeOpenAi> {
  const state = await startFakeServer<FakeOpenAi>(
    (req, res, body, s) => handle(req, res, body, s, options.apiKey),
    options.port ?? 0,
  );
  state.baseUrl = `${state.url}/v1`;
  return state;
}

/** Requests seen per `fail-first-*` model, across every fake in the process. */
const failures = new Map<string, number>();

let answered = 0;

/**
 * The head OpenAI gives every answer, errors included: a request id, organisation and
 * timing, the rate-limit headers of the key, and a load balancer's cookie.
 */
function fakeOpenAiHead(): Record<string, string> {
  answered += 1;
  return {
    'x-request-id': `req_fake_${answered}`,
    'openai-organization': 'org-fake',
    'openai-processing-ms': '12',
    'x-ratelimit-limit-requests': '500',
    'x-ratelimit-limit-tokens': '30000',
    'x-ratelimit-remaining-requests': '499',
    'x-ratelimit-remaining-tokens': '29950',
    'x-ratelimit-reset-requests': '120ms',
    'x-ratelimit-reset-tokens': '100ms',
    'set-cookie': '__cf_bm=fake; path=/; HttpOnly',
  };
}

function sendError(
  res: ServerResponse,
  status: number,
  message: string,
  type: string,
  code: string | null,
): void {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...fakeOpenAiHead() };
  if (status === 429) headers['retry-after'] = '2';
  res.writeHead(status, headers);
  res.end(JSON.stringify({ error: { message, type, param: null, code } }));
}

async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  raw: string,
  state: FakeOpenAi,
  apiKey: string | undefined,
): Promise<void> {
  if (apiKey && req.headers.authorization !== `Bearer ${apiKey}`) {
    sendError(res, 401, 'Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key');
    return;
  }
  if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
    if (!otherOperation(req, res, raw)) {
      sendError(
        res,
        404,
        `Unknown request URL: ${req.method} ${req.url}.`,
        'invalid_request_error',
        'unknown_url',
      );
    }
    return;
  }
  let body: {
    model?: string;
    messages?: Array<{ role: string; content: unknown }>;
    stream?: boolean;
    stream_options?: { include_usage?: boolean };
    response_format?: { type?: string };
  };
  try {
    body = JSON.parse(raw);
  } catch {
    sendError(res, 400, 'We could not parse the JSON body of your request.', 'invalid_request_error', null);
    return;
  }
  const model = body.model ?? '';
  const status = /^error-(\d{3})$/.exec(model);
  if (status) {
    sendError(
      res,
      Number(status[1]),
      `Simulated error ${status[1]}.`,
      'server_error',
      `simulated_${status[1]}`,
    );
    return;
  }
  if (/^fail-first-\d+(-[\w-]+)?$/.test(model)) {
    const seen = (failures.get(model) ?? 0) + 1;
    failures.set(model, seen);
    if (seen <= Number(model.split('-')[2])) {
      sendError(res, 503, 'Simulated overload.', 'server_error', 'simulated_503');
      return;
    }
  }
  res.on('close', () => {
    if (!res.writableFinished) state.aborted++;
  });
  if (model === 'hang') return;
  const lastUser = [...(body.messages ?? [])].reverse().find((m) => m.role === 'user');
  const structured = ['json_schema', 'json_object'].includes(body.response_format?.type ?? '');
  const content = structured
    ? FAKE_STRUCTURED_TEXT
    : `Echo: ${typeof lastUser?.content === 'string' ? lastUser.content : '[parts]'}`;
  const id = `chatcmpl-fake-${state.requests.length}`;
  const created = Math.floor(Date.now() / 1000);
  const usage = { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 };
  const toolCalls =
    model === 'tool-call'
      ? [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }]
      : undefined;
  if (!body.stream) {
    res.writeHead(200, { 'content-type': 'application/json', ...fakeOpenAiHead() });
    res.end(
      JSON.stringify({
        id,
        object: 'chat.completion',
        created,
        model,
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: toolCalls ? null : content,
              ...(toolCalls ? { tool_calls: toolCalls } : {}),
            },
            logprobs: null,
            finish_reason: toolCalls ? 'tool_calls' : 'stop',
          },
        ],
        usage,
        system_fingerprint: 'fp_fake',
      }),
    );
    return;
  }
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    ...fakeOpenAiHead(),
  });
  const base = { id, object: 'chat.completion.chunk', created, model, system_fingerprint: 'fp_fake' };
  const send = (value: unknown) => res.write(`data: ${JSON.stringify(value)}\n\n`);
  const pause = model === 'slow-stream' ? 50 : 0;
  send({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
  for (const piece of content.split(/(?<=\s)/)) {
    if (pause) await new Promise((r) => setTimeout(r, pause));
    if (res.destroyed) return;
    send({ ...base, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] });
  }
  send({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
  if (body.stream_options?.include_usage) send({ ...base, choices: [], usage });
  res.end('data: [DONE]\n\n');
}

/** Batches the fakes created, by id, across every fake in the process (ids are unique). */
const fakeBatches = new Map<string, Record<string, unknown>>();

/**
 * The Batch API as OpenAI answers it. A new batch is `validating`; the first read after that
 * finds it `completed`, with output file `file-output-<batch id>` — unless its metadata holds
 * `fake_status`, the status it then keeps (no output file but for `completed`).
 */
function batchOperation(
  req: IncomingMessage,
  res: ServerResponse,
  raw: string,
  id: string | undefined,
  cancel: boolean,
): boolean {
  if (req.method === 'POST' && id === undefined) {
    const body = JSON.parse(raw || '{}') as Record<string, unknown>;
    const batch = {
      id: `batch_fake_${fakeBatches.size + 1}_${Date.now().toString(36)}`,
      object: 'batch',
      endpoint: body.endpoint ?? '/v1/chat/completions',
      errors: null,
      input_file_id: body.input_file_id ?? null,
      completion_window: body.completion_window ?? '24h',
      status: 'validating',
      output_file_id: null,
      error_file_id: null,
      created_at: 1_700_000_000,
      in_progress_at: null,
      expires_at: 1_700_086_400,
      finalizing_at: null,
      completed_at: null,
      failed_at: null,
      expired_at: null,
      cancelling_at: null,
      cancelled_at: null,
      request_counts: { total: 0, completed: 0, failed: 0 },
      metadata: body.metadata ?? null,
    };
    fakeBatches.set(batch.id, batch);
    sendJson(res, batch);
    return true;
  }
  if (req.method === 'GET' && id === undefined) {
    const data = [...fakeBatches.values()].reverse();
    sendJson(res, {
      object: 'list',
      data,
      first_id: data[0]?.id ?? null,
      last_id: data.at(-1)?.id ?? null,
      has_more: false,
    });
    return true;
  }
  const batch = id === undefined ? undefined : fakeBatches.get(id);
  if (!batch) {
    sendError(res, 404, `No batch found with id '${id ?? ''}'.`, 'invalid_request_error', null);
    return true;
  }
  if (req.method === 'POST' && cancel) {
    batch.status = 'cancelling';
    batch.cancelling_at = 1_700_000_100;
    sendJson(res, batch);
    return true;
  }
  if (req.method === 'GET' && !cancel) {
    const wanted = (batch.metadata as Record<string, unknown> | null)?.fake_status;
    if (batch.status === 'validating') {
      batch.status = typeof wanted === 'string' ? wanted : 'completed';
      if (batch.status === 'completed') {
        batch.output_file_id = `file-output-${batch.id as string}`;
        batch.completed_at = 1_700_000_200;
        batch.request_counts = { total: 1, completed: 1, failed: 0 };
      }
    }
    sendJson(res, batch);
    return true;
  }
  return false;
}

function sendJson(res: ServerResponse, body: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'req_upstream_1' });
  res.end(JSON.stringify(body));
}

/** The rest of the OpenAI surface the gateway forwards, answered in its documented shapes. */
function otherOperation(req: IncomingMessage, res: ServerResponse, raw: string): boolean {
  const path = new URL(req.url ?? '/', 'http://fake').pathname;
  let m: RegExpExecArray | null;
  if (req.method === 'POST' && (m = /^\/v1\/threads\/([^/]+)\/runs\/([^/]+)$/.exec(path))) {
    const { metadata } = JSON.parse(raw || '{}') as { metadata?: Record<string, string> };
    sendJson(res, {
      id: m[2],
      object: 'thread.run',
      created_at: 1_700_000_000,
      thread_id: m[1],
      assistant_id: 'asst_1',
      status: 'completed',
      required_action: null,
      last_error: null,
      expires_at: null,
      started_at: 1_700_000_001,
      cancelled_at: null,
      failed_at: null,
      completed_at: 1_700_000_002,
      incomplete_details: null,
      model: 'gpt-4o-mini',
      instructions: '',
      tools: [],
      metadata: metadata ?? {},
      usage: { completion_tokens: 1, prompt_tokens: 2, total_tokens: 3 },
      temperature: 1,
      top_p: 1,
      max_prompt_tokens: 1000,
      max_completion_tokens: 1000,
      truncation_strategy: { type: 'auto', last_messages: null },
      response_format: 'auto',
      tool_choice: 'auto',
      parallel_tool_calls: true,
    });
    return true;
  }
  if (req.method === 'POST' && (m = /^\/v1\/fine_tuning\/jobs\/([^/]+)\/cancel$/.exec(path))) {
    sendJson(res, {
      id: m[1],
      object: 'fine_tuning.job',
      created_at: 1_700_000_000,
      model: 'gpt-4o-mini-2024-07-18',
      organization_id: 'org-fake',
      fine_tuned_model: null,
      finished_at: null,
      estimated_finish: null,
      trained_tokens: null,
      seed: 42,
      error: null,
      hyperparameters: { n_epochs: 'auto' },
      result_files: [],
      status: 'cancelled',
      training_file: 'file-train',
      validation_file: null,
      integrations: [],
    });
    return true;
  }
  if ((m = /^\/v1\/batches(?:\/([^/]+)(\/cancel)?)?$/.exec(path))) {
    return batchOperation(req, res, raw, m[1], m[2] !== undefined);
  }
  if (req.method === 'GET' && (m = /^\/v1\/files\/([^/]+)\/content$/.exec(path))) {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    res.end(`{"prompt": "content of ${m[1]}"}\n`);
    return true;
  }
  if (req.method === 'POST' && path === '/v1/files') {
    sendJson(res, {
      id: 'file-uploaded',
      object: 'file',
      bytes: Buffer.byteLength(raw),
      created_at: 1_700_000_000,
      filename: /filename="([^"]+)"/.exec(raw)?.[1] ?? 'upload',
      purpose: /name="purpose"\r\n\r\n([^\r]+)/.exec(raw)?.[1] ?? 'unknown',
    });
    return true;
  }
  if (req.method === 'POST' && path === '/v1/embeddings') {
    sendJson(res, fakeEmbeddingList(raw));
    return true;
  }
  if (req.method === 'POST' && path === '/v1/completions') {
    const { model, prompt, stream } = JSON.parse(raw || '{}') as {
      model?: string;
      prompt?: unknown;
      stream?: boolean;
    };
    const text = `Echo: ${Array.isArray(prompt) ? prompt.join(' ') : String(prompt ?? '')}`;
    const base = { id: 'cmpl-fake', object: 'text_completion', created: 1_700_000_000, model };
    if (!stream) {
      sendJson(res, {
        ...base,
        choices: [{ index: 0, text, logprobs: null, finish_reason: 'stop' }],
        usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
      });
      return true;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const piece of text.split(/(?<=\s)/)) {
      res.write(
        `data: ${JSON.stringify({ ...base, choices: [{ index: 0, text: piece, logprobs: null, finish_reason: null }] })}\n\n`,
      );
    }
    res.write(
      `data: ${JSON.stringify({ ...base, choices: [{ index: 0, text: '', logprobs: null, finish_reason: 'stop' }] })}\n\n`,
    );
    res.end('data: [DONE]\n\n');
    return true;
  }
  if (req.method === 'POST' && path === '/v1/responses') {
    const { model, input, stream } = JSON.parse(raw || '{}') as {
      model?: string;
      input?: unknown;
      stream?: boolean;
    };
    const text = `Echo: ${typeof input === 'string' ? input : '[items]'}`;
    const message = (content: string) => ({
      id: 'msg_fake',
      type: 'message',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: content, annotations: [] }],
    });
    const response = (status: string, output: unknown[]) => ({
      id: 'resp_fake',
      object: 'response',
      created_at: 1_700_000_000,
      status,
      model,
      output,
      usage: { input_tokens: 5, output_tokens: 3, total_tokens: 8 },
    });
    if (!stream) {
      sendJson(res, { ...response('completed', [message(text)]), output_text: text });
      return true;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    let sequence = 0;
    const send = (type: string, data: Record<string, unknown>) =>
      res.write(
        `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`,
      );
    send('response.created', { response: response('in_progress', []) });
    send('response.output_item.added', {
      output_index: 0,
      item: { ...message(''), status: 'in_progress', content: [] },
    });
    send('response.content_part.added', {
      item_id: 'msg_fake',
      output_index: 0,
      content_index: 0,
      part: { type: 'output_text', text: '', annotations: [] },
    });
    for (const piece of text.split(/(?<=\s)/)) {
      send('response.output_text.delta', {
        item_id: 'msg_fake',
        output_index: 0,
        content_index: 0,
        delta: piece,
      });
    }
    send('response.output_text.done', { item_id: 'msg_fake', output_index: 0, content_index: 0, text });
    send('response.content_part.done', {
      item_id: 'msg_fake',
      output_index: 0,
      content_index: 0,
      part: { type: 'output_text', text, annotations: [] },
    });
    send('response.output_item.done', { output_index: 0, item: message(text) });
    send('response.completed', { response: response('completed', [message(text)]) });
    res.end();
    return true;
  }
  if (req.method === 'GET' && path === '/v1/models') {
    sendJson(res, {
      object: 'list',
      data: [{ id: 'gpt-4o-mini', object: 'model', created: 1_700_000_000, owned_by: 'openai' }],
    });
    return true;
  }
  return false;
}

/**
 * An embeddings answer: the vector [0.1, 0.2, 0.3] for each input, as floats or, when the request
 * asks for base64 (the Node SDK does), as the little-endian float32 bytes OpenAI sends.
 */
export function fakeEmbeddingList(raw: string): Record<string, unknown> {
  const { model, input, encoding_format } = JSON.parse(raw || '{}') as {
    model?: string;
    input?: string | string[];
    encoding_format?: 'float' | 'base64';
  };
  const inputs = Array.isArray(input) ? input : [input ?? ''];
  const vector = [0.1, 0.2, 0.3];
  const embedding =
    encoding_format === 'base64' ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector;
  return {
    object: 'list',
    model,
    data: inputs.map((_, index) => ({ object: 'embedding', index, embedding })),
    usage: { prompt_tokens: inputs.length, total_tokens: inputs.length },
  };
}
