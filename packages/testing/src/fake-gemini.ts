import type { IncomingMessage, ServerResponse } from 'node:http';
import { startFakeServer, type RecordedRequest } from './fake-server.ts';
import { FAKE_STRUCTURED_TEXT } from './fake-structured.ts';

export interface FakeGemini {
  url: string;
  /** The base URL an integration uses: `<url>/v1beta`. */
  baseUrl: string;
  requests: RecordedRequest[];
  /** Requests whose client went away before the answer was complete. */
  aborted: number;
  close(): Promise<void>;
}

interface Part {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  functionCall?: { name: string; args: Record<string, unknown> };
}

interface Candidate {
  content?: { role: 'model'; parts: Part[] };
  finishReason: string;
  index?: number;
  safetyRatings?: Array<{ category: string; probability: string; blocked?: boolean }>;
  logprobsResult?: unknown;
}

const ERROR_STATUSES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

export const FAKE_GEMINI_USAGE = {
  promptTokenCount: 9,
  cachedContentTokenCount: 4,
  candidatesTokenCount: 5,
  totalTokenCount: 14,
};
/** What thinking scenarios add to FAKE_GEMINI_USAGE. */
export const FAKE_GEMINI_THOUGHTS_TOKENS = 12;

/**
 * A loopback stand-in for the Gemini API (`POST /v1beta/models/{model}:generateContent` and
 * `:streamGenerateContent?alt=sse`) speaking its wire format: the key in `x-goog-api-key` (or
 * `?key=`), Google's error envelope, and SSE streams of partial responses with CRLF event
 * separators and no terminator. The model name picks a scenario:
 *   anything          a text answer echoing the last user text, one candidate per candidateCount
 *                     (with logprobs when responseLogprobs is set)
 *   function-call     a thought summary, then two function calls, the first with a thoughtSignature
 *   thinking          a thought summary, then text
 *   max-tokens        finishReason MAX_TOKENS
 *   safety            a candidate stopped for SAFETY, with no content
 *   blocked           the prompt blocked: promptFeedback.blockReason and no candidates
 *   stream-error      streamed: one chunk, then an error event
 *   error-<status>    that HTTP status with Google's error body (429 with a RetryInfo of 37s)
 *   slow-stream       stream chunks 50 ms apart
 *   hang              never answers
 */
export async function startFakeGemini(options: { apiKey?: string; port?: number } = {}): Promise<FakeGemini> {
  const state = await startFakeServer<FakeGemini>(
    (req, res, body, s) => handle(req, res, body, s, options.apiKey),
    options.port ?? 0,
  );
  state.baseUrl = `${state.url}/v1beta`;
  return state;
}

function errorBody(status: number, message: string, details: unknown[] = []) {
  return { error: { code: status, message, status: ERROR_STATUSES[status] ?? 'UNKNOWN', details } };
}

function sendError(res: ServerResponse, status: number, message: string, details: unknown[] = []): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' });
  res.end(JSON.stringify(errorBody(status, message, details)));
}

interface GenerateBody {
  contents?: Array<{ role?: string; parts?: Part[] }>;
  generationConfig?: { candidateCount?: number; responseLogprobs?: boolean; responseMimeType?: string };
}

async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  raw: string,
  state: FakeGemini,
  apiKey: string | undefined,
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://fake');
  const key = req.headers['x-goog-api-key'] ?? url.searchParams.get('key');
  if (apiKey && key !== apiKey) {
    // Gemini answers a bad key with 400, not 401.
    sendError(res, 400, 'API key not valid. Please pass a valid API key.', [
      {
        '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
        reason: 'API_KEY_INVALID',
        domain: 'googleapis.com',
        metadata: { service: 'generativelanguage.googleapis.com' },
      },
    ]);
    return;
  }
  const route = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent)$/.exec(url.pathname);
  if (req.method !== 'POST' || !route) {
    sendError(res, 404, `Method not found: ${req.method} ${url.pathname}`);
    return;
  }
  const model = decodeURIComponent(route[1]!);
  const stream = route[2] === 'streamGenerateContent';
  let body: GenerateBody;
  try {
    body = JSON.parse(raw);
  } catch {
    sendError(res, 400, 'Invalid JSON payload received.');
    return;
  }
  if (!body.contents?.length) {
    sendError(res, 400, '* GenerateContentRequest.contents: contents is not specified');
    return;
  }
  const status = /^error-(\d{3})$/.exec(model);
  if (status) {
    const code = Number(status[1]);
    const details =
      code === 429 ? [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '37s' }] : [];
    sendError(res, code, `Simulated error ${code}.`, details);
    return;
  }
  res.on('close', () => {
    if (!res.writableFinished) state.aborted++;
  });
  if (model === 'hang') return;

  const responseId = `fake-response-${state.requests.length}`;
  const thoughts = model === 'thinking' || model === 'function-call' ? FAKE_GEMINI_THOUGHTS_TOKENS : 0;
  const usage = {
    ...FAKE_GEMINI_USAGE,
    totalTokenCount: FAKE_GEMINI_USAGE.totalTokenCount + thoughts,
    ...(thoughts ? { thoughtsTokenCount: thoughts } : {}),
  };
  const common = { usageMetadata: usage, modelVersion: `${model}-001`, responseId };
  if (model === 'blocked') {
    const blocked = {
      promptFeedback: {
        blockReason: 'SAFETY',
        safetyRatings: [{ category: 'HARM_CATEGORY_HARASSMENT', probability: 'HIGH' }],
      },
      ...common,
      usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 },
    };
    if (stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`data: ${JSON.stringify(blocked)}\r\n\r\n`);
    } else {
      res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
      res.end(JSON.stringify(blocked));
    }
    return;
  }
  const candidates = candidatesFor(model, body);
  if (!stream) {
    res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
    res.end(JSON.stringify({ candidates, ...common }));
    return;
  }

  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const pause = model === 'slow-stream' ? 50 : 0;
  const send = async (data: unknown) => {
    if (pause) await new Promise((r) => setTimeout(r, pause));
    if (!res.destroyed) res.write(`data: ${JSON.stringify(data)}\r\n\r\n`);
  };
  // Each chunk carries only new parts: thoughts and calls whole, text a word at a time.
  const pieces = candidates.map((c) =>
    (c.content?.parts ?? []).flatMap((part) =>
      part.text !== undefined && !part.thought
        ? part.text.split(/(?<=\s)/).map((text) => ({ ...part, text }))
        : [part],
    ),
  );
  const steps = Math.max(1, ...pieces.map((p) => p.length));
  for (let step = 0; step < steps; step++) {
    if (model === 'stream-error' && step === 1) {
      await send(errorBody(503, 'The model is overloaded. Please try again later.'));
      res.end();
      return;
    }
    const last = step === steps - 1;
    const chunk = candidates.flatMap((candidate, i) => {
      const part = pieces[i]![step];
      if (!part && !last) return [];
      return [
        {
          ...(part ? { content: { parts: [part], role: 'model' } } : {}),
          ...(last ? { finishReason: candidate.finishReason } : {}),
          ...(candidate.index ? { index: candidate.index } : {}),
        },
      ];
    });
    const running = last
      ? usage
      : { promptTokenCount: usage.promptTokenCount, totalTokenCount: usage.promptTokenCount + step };
    await send({ candidates: chunk, ...common, usageMetadata: running });
  }
  res.end();
}

function candidatesFor(model: string, body: GenerateBody): Candidate[] {
  const lastUser = [...(body.contents ?? [])].reverse().find((c) => c.role === 'user');
  const userText = lastUser?.parts?.find((p) => typeof p.text === 'string')?.text;
  const text = `Echo: ${userText ?? '[parts]'}`;
  const answer = (parts: Part[], finishReason = 'STOP'): Candidate[] => [
    { content: { role: 'model', parts }, finishReason },
  ];
  switch (model) {
    case 'function-call':
      return answer([
        { text: '**Planning** The user wants the weather; use the tool.', thought: true },
        {
          functionCall: { name: 'get_weather', args: { city: 'Paris' } },
          thoughtSignature: 'CiQB0e2Kb7x1yH0f',
        },
        { functionCall: { name: 'get_time', args: { zone: 'Europe/Paris' } } },
      ]);
    case 'thinking':
      return answer([{ text: '**Greeting** Simple hello.', thought: true }, { text: 'Hello there!' }]);
    case 'max-tokens':
      return answer([{ text: 'The story begins' }], 'MAX_TOKENS');
    case 'safety':
      return [
        {
          finishReason: 'SAFETY',
          safetyRatings: [
            { category: 'HARM_CATEGORY_DANGEROUS_CONTENT', probability: 'HIGH', blocked: true },
          ],
        },
      ];
    default: {
      if (body.generationConfig?.responseMimeType === 'application/json') {
        return answer([{ text: FAKE_STRUCTURED_TEXT }]);
      }
      const count = body.generationConfig?.candidateCount ?? 1;
      return Array.from({ length: count }, (_, index) => ({
        content: { role: 'model', parts: [{ text: index === 0 ? text : `${text} (${index + 1})` }] },
        finishReason: 'STOP',
        // JSON leaves out a zero index, as Google's servers do.
        ...(index ? { index } : {}),
        ...(body.generationConfig?.responseLogprobs ? { logprobsResult: logprobsFor(text) } : {}),
      }));
    }
  }
}

function logprobsFor(text: string) {
  const tokens = text.split(/(?<=\s)/);
  return {
    topCandidates: tokens.map((token) => ({
      candidates: [
        { token, tokenId: 1, logProbability: -0.1 },
        { token: 'x', tokenId: 2, logProbability: -2.5 },
      ],
    })),
    chosenCandidates: tokens.map((token) => ({ token, tokenId: 1, logProbability: -0.1 })),
  };
}
