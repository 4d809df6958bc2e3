import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

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
 *   slow-stream       stream chunks 50 ms apart
 *   hang              never answers (to test timeouts and client aborts)
 *   tool-call         answers with a tool call
 */
export async function startFakeOpenAi(options: { apiKey?: string; port?: number } = {}): Promise<FakeOpenAi> {
  const state: FakeOpenAi = { url: '', baseUrl: '', requests: [], aborted: 0, close: async () => {} };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      state.requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
      handle(req, res, body, state, options.apiKey).catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  state.url = `http://127.0.0.1:${port}`;
  state.baseUrl = `${state.url}/v1`;
  state.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return state;
}

function sendError(
  res: ServerResponse,
  status: number,
  message: string,
  type: string,
  code: string | null,
): void {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
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
    sendError(
      res,
      404,
      `Unknown request URL: ${req.method} ${req.url}.`,
      'invalid_request_error',
      'unknown_url',
    );
    return;
  }
  let body: {
    model?: string;
    messages?: Array<{ role: string; content: unknown }>;
    stream?: boolean;
    stream_options?: { include_usage?: boolean };
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
  res.on('close', () => {
    if (!res.writableFinished) state.aborted++;
  });
  if (model === 'hang') return;
  const lastUser = [...(body.messages ?? [])].reverse().find((m) => m.role === 'user');
  const content = `Echo: ${typeof lastUser?.content === 'string' ? lastUser.content : '[parts]'}`;
  const id = `chatcmpl-fake-${state.requests.length}`;
  const created = Math.floor(Date.now() / 1000);
  const usage = { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 };
  const toolCalls =
    model === 'tool-call'
      ? [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }]
      : undefined;
  if (!body.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
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
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
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
