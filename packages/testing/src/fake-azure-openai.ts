import type { IncomingMessage, ServerResponse } from 'node:http';
import { startFakeServer, type RecordedRequest } from './fake-server.ts';
import { fakeEmbeddingList } from './fake-openai.ts';
import { FAKE_STRUCTURED_TEXT } from './fake-structured.ts';

export interface FakeAzureOpenAi {
  /** The resource endpoint, as an integration's custom_host (in place of https://<resource>.openai.azure.com). */
  url: string;
  requests: RecordedRequest[];
  /** Requests whose client went away before the answer was complete. */
  aborted: number;
  close(): Promise<void>;
}

/** The model a deployment serves, as Azure names it in responses. */
export const FAKE_AZURE_MODEL = 'gpt-4o-2024-11-20';

const SAFE = { filtered: false, severity: 'safe' };
const PROMPT_FILTER_RESULTS = [
  {
    prompt_index: 0,
    content_filter_results: {
      hate: SAFE,
      jailbreak: { filtered: false, detected: false },
      self_harm: SAFE,
      sexual: SAFE,
      violence: SAFE,
    },
  },
];
const COMPLETION_FILTER_RESULTS = { hate: SAFE, self_harm: SAFE, sexual: SAFE, violence: SAFE };
const FILTERED_RESULTS = { ...COMPLETION_FILTER_RESULTS, violence: { filtered: true, severity: 'high' } };

/**
 * A loopback stand-in for Azure OpenAI's classic deployment API:
 * `POST /openai/deployments/{deployment}/chat/completions?api-version=...` with an `api-key`
 * header, and `/openai/deployments/{deployment}/embeddings` (fakeEmbeddingList's answer). A wrong path or a missing api-version is Azure's 404, a wrong key its 401. The
 * deployment picks a scenario (the body's model is ignored, as Azure ignores it):
 *   anything             a completion echoing the last user message, with content filter results
 *   output-filtered      finish_reason content_filter with partial content (also when streaming)
 *   prompt-filtered      Azure's 400 with code content_filter
 *   missing-deployment   404 DeploymentNotFound
 *   error-429            Azure's 429 with retry-after: 6
 *   tool-call            answers with a tool call (not when streaming)
 *   hang                 never answers
 */
export async function startFakeAzureOpenAi(
  options: { apiKey?: string; apiVersions?: string[]; port?: number } = {},
): Promise<FakeAzureOpenAi> {
  const state = await startFakeServer<FakeAzureOpenAi>(
    (req, res, body, s) => handle(req, res, body, s, options),
    options.port ?? 0,
  );
  return state;
}

/** The head Azure gives every answer (observed): its request ids, the region and the remaining rate limits. */
const AZURE_HEAD = {
  'apim-request-id': 'fake-apim',
  'x-request-id': 'fake-azure-request',
  'x-ms-region': 'Sweden Central',
  'x-ratelimit-remaining-requests': '99',
  'x-ratelimit-remaining-tokens': '99000',
};

function sendError(
  res: ServerResponse,
  status: number,
  error: Record<string, unknown>,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...AZURE_HEAD, ...headers });
  res.end(JSON.stringify({ error }));
}

async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  raw: string,
  state: FakeAzureOpenAi,
  options: { apiKey?: string; apiVersions?: string[] },
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://fake');
  const route = /^\/openai\/deployments\/([^/]+)\/(chat\/completions|embeddings)$/.exec(url.pathname);
  const apiVersion = url.searchParams.get('api-version');
  if (
    req.method !== 'POST' ||
    !route ||
    !apiVersion ||
    (options.apiVersions && !options.apiVersions.includes(apiVersion))
  ) {
    sendError(res, 404, { code: '404', message: 'Resource not found' });
    return;
  }
  if (options.apiKey && req.headers['api-key'] !== options.apiKey) {
    sendError(res, 401, {
      code: '401',
      message:
        'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.',
    });
    return;
  }
  const deployment = decodeURIComponent(route[1]!);
  let body: {
    messages?: Array<{ role: string; content: unknown }>;
    stream?: boolean;
    stream_options?: { include_usage?: boolean };
    response_format?: { type?: string };
  };
  try {
    body = JSON.parse(raw);
  } catch {
    sendError(res, 400, {
      message: 'Invalid JSON body.',
      type: 'invalid_request_error',
      param: null,
      code: null,
    });
    return;
  }
  if (route[2] === 'embeddings' && deployment !== 'missing-deployment') {
    res.writeHead(200, { 'content-type': 'application/json', ...AZURE_HEAD });
    res.end(JSON.stringify({ ...fakeEmbeddingList(raw), model: deployment }));
    return;
  }
  switch (deployment) {
    case 'missing-deployment':
      sendError(res, 404, {
        code: 'DeploymentNotFound',
        message:
          'The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.',
      });
      return;
    case 'error-429':
      sendError(
        res,
        429,
        {
          code: '429',
          message: `Requests to the ChatCompletions_Create Operation under Azure OpenAI API version ${apiVersion} have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after 6 seconds.`,
        },
        { 'retry-after': '6', 'retry-after-ms': '6000' },
      );
      return;
    case 'prompt-filtered':
      sendError(res, 400, {
        message:
          "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry.",
        type: null,
        param: 'prompt',
        code: 'content_filter',
        status: 400,
        innererror: {
          code: 'ResponsibleAIPolicyViolation',
          content_filter_result: {
            ...PROMPT_FILTER_RESULTS[0]!.content_filter_results,
            jailbreak: { filtered: true, detected: true },
          },
        },
      });
      return;
  }
  res.on('close', () => {
    if (!res.writableFinished) state.aborted++;
  });
  if (deployment === 'hang') return;
  const filtered = deployment === 'output-filtered';
  const lastUser = [...(body.messages ?? [])].reverse().find((m) => m.role === 'user');
  const structured = ['json_schema', 'json_object'].includes(body.response_format?.type ?? '');
  const content = filtered
    ? 'Partial answer'
    : structured
      ? FAKE_STRUCTURED_TEXT
      : `Echo: ${typeof lastUser?.content === 'string' ? lastUser.content : '[parts]'}`;
  const toolCalls =
    deployment === 'tool-call' && !body.stream
      ? [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }]
      : undefined;
  const finishReason = filtered ? 'content_filter' : toolCalls ? 'tool_calls' : 'stop';
  const id = `chatcmpl-azure-${state.requests.length}`;
  const created = Math.floor(Date.now() / 1000);
  const usage = { prompt_tokens: 12, completion_tokens: 2, total_tokens: 14 };
  const headers = AZURE_HEAD;
  if (!body.stream) {
    res.writeHead(200, { 'content-type': 'application/json', ...headers });
    res.end(
      JSON.stringify({
        id,
        object: 'chat.completion',
        created,
        model: FAKE_AZURE_MODEL,
        system_fingerprint: 'fp_fake_azure',
        prompt_filter_results: PROMPT_FILTER_RESULTS,
        choices: [
          {
            index: 0,
            finish_reason: finishReason,
            logprobs: null,
            message: {
              role: 'assistant',
              content: toolCalls ? null : content,
              refusal: null,
              annotations: [],
              ...(toolCalls ? { tool_calls: toolCalls } : {}),
            },
            content_filter_results: filtered ? FILTERED_RESULTS : COMPLETION_FILTER_RESULTS,
          },
        ],
        usage,
      }),
    );
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...headers });
  const send = (value: unknown) => res.write(`data: ${JSON.stringify(value)}\n\n`);
  const base = { id, object: 'chat.completion.chunk', created, model: FAKE_AZURE_MODEL };
  const choice = (delta: object, finish: string | null, results: object = COMPLETION_FILTER_RESULTS) => ({
    ...base,
    choices: [{ content_filter_results: results, delta, finish_reason: finish, index: 0, logprobs: null }],
  });
  // Azure's first event carries only the prompt filter results, with no choices.
  send({
    choices: [],
    created: 0,
    id: '',
    model: '',
    object: '',
    prompt_filter_results: PROMPT_FILTER_RESULTS,
  });
  send(choice({ content: '', refusal: null, role: 'assistant' }, null, {}));
  for (const piece of content.split(/(?<=\s)/)) send(choice({ content: piece }, null));
  send(choice({}, finishReason, filtered ? FILTERED_RESULTS : {}));
  if (body.stream_options?.include_usage) send({ ...base, choices: [], usage });
  res.end('data: [DONE]\n\n');
}
