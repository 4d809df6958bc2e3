import { EventSourceParserStream } from 'eventsource-parser/stream';
import { AppError, BadRequest, UpstreamError } from '@switchyard/core';
import type { ProviderResponse } from './types.ts';
import type { CancelSignal } from '../routing/cancellation.ts';

// The response shapes every client sees, whatever the provider. Adapters that translate
// build these; the OpenAI adapter forwards them as the upstream sent them.

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call';

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type ContentBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature?: string }
  | { type: 'redacted_thinking'; data: string };

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  completion_tokens_details?: {
    reasoning_tokens?: number;
    accepted_prediction_tokens?: number;
    rejected_prediction_tokens?: number;
  } | null;
  /**
   * `cache_creation_tokens`: prompt tokens written to the provider's prompt cache (Anthropic's
   * cache_creation_input_tokens, Bedrock's cacheWriteInputTokens), charged at the cache-write
   * price; beside `cached_tokens`, a part of prompt_tokens.
   */
  prompt_tokens_details?: { cached_tokens?: number; cache_creation_tokens?: number } | null;
}

export interface TokenLogprob {
  token: string;
  logprob: number;
  bytes: number[] | null;
  top_logprobs: Array<{ token: string; logprob: number; bytes: number[] | null }>;
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: Array<{
    index: number;
    finish_reason: FinishReason;
    /** The stop sequence that ended the answer, where the provider tells it (Anthropic). */
    stop_reason?: string;
    message: {
      role: 'assistant';
      content: string | null;
      tool_calls?: ToolCall[];
      function_call?: { name: string; arguments: string };
      content_blocks?: ContentBlock[] | null;
    };
    logprobs: { content: TokenLogprob[] | null } | null;
  }>;
  usage?: Usage;
  system_fingerprint?: string;
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: Array<{
    index: number;
    delta: {
      role?: 'assistant';
      content?: string | null;
      tool_calls?: Array<{
        index: number;
        id?: string;
        type?: 'function';
        function?: { name?: string; arguments?: string };
      }>;
      content_blocks?: Array<ContentBlock & { index: number }>;
    };
    finish_reason: FinishReason | null;
    /** The stop sequence that ended the answer, where the provider tells it (Anthropic). */
    stop_reason?: string;
    logprobs?: { content: TokenLogprob[] | null } | null;
  }>;
  usage?: Usage | null;
  system_fingerprint?: string;
}

const encoder = new TextEncoder();

/** One server-sent event in the OpenAI stream format. */
export function sseEvent(value: ChatCompletionChunk | { error: unknown }): Uint8Array {
  return encoder.encode(`data: ${JSON.stringify(value)}\n\n`);
}

export const SSE_DONE = encoder.encode('data: [DONE]\n\n');

export function jsonResponse(body: ChatCompletion): ProviderResponse {
  return {
    kind: 'json',
    status: 200,
    body: Buffer.from(JSON.stringify(body)),
    contentType: 'application/json',
  };
}

/** A translated stream; the generator must end with SSE_DONE. */
export function streamResponse(chunks: AsyncIterable<Uint8Array>): ProviderResponse {
  return { kind: 'stream', status: 200, body: chunks, contentType: 'text/event-stream' };
}

export interface UpstreamEvent {
  event: string | undefined;
  data: string;
}

/** Parses an upstream server-sent-event body into events as they arrive. */
export async function* readServerSentEvents(body: AsyncIterable<Uint8Array>): AsyncGenerator<UpstreamEvent> {
  const decoded = ReadableStream.from(body)
    .pipeThrough(new TextDecoderStream())
    .pipeThrough(new EventSourceParserStream());
  for await (const message of decoded) yield { event: message.event, data: message.data };
}

/** The chunks of one streamed completion: every chunk carries the same id, created and model. */
export function chunkEncoder(meta: { id: string; created: number; model: string }) {
  const chunk = (choices: ChatCompletionChunk['choices'], usage?: Usage) =>
    sseEvent({ ...meta, object: 'chat.completion.chunk', choices, ...(usage ? { usage } : {}) });
  return {
    delta: (
      index: number,
      delta: ChatCompletionChunk['choices'][number]['delta'],
      logprobs?: ChatCompletionChunk['choices'][number]['logprobs'],
    ) => chunk([{ index, delta, finish_reason: null, ...(logprobs ? { logprobs } : {}) }]),
    finish: (index: number, reason: FinishReason, extra: { stop_reason?: string } = {}) =>
      chunk([{ index, delta: {}, finish_reason: reason, ...extra }]),
    usage: (usage: Usage) => chunk([], usage),
  };
}

/**
 * A translated stream as the client receives it: the adapter's chunks, then `data: [DONE]`.
 * The status line has already gone out, so an upstream failure mid-stream becomes one error
 * event before the end. A client that went away gets nothing more.
 */
export async function* translatedStream(
  provider: string,
  chunks: AsyncIterable<Uint8Array>,
  signal: CancelSignal,
): AsyncGenerator<Uint8Array> {
  try {
    yield* chunks;
  } catch (err) {
    if (signal.aborted) throw err;
    const failure =
      err instanceof AppError
        ? err
        : new UpstreamError(502, `${provider}: the upstream stream failed (${(err as Error).message}).`, {
            code: 'upstream_stream_failed',
          });
    yield sseEvent(failure.toBody());
  }
  yield SSE_DONE;
}

// Reading the client's request, for adapters that translate it.

/** A `data:` URL as its media type and base64 payload; undefined for any other URL. */
export function parseDataUrl(url: string): { mediaType: string; data: string } | undefined {
  const match = /^data:([^;,]*)[^,]*?(;base64)?,(.*)$/is.exec(url);
  if (!match) return undefined;
  const [, mediaType, base64, payload = ''] = match;
  const data = base64
    ? payload
    : Buffer.from(
        payload.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))),
        'latin1',
      ).toString('base64');
  return { mediaType: mediaType || 'text/plain', data };
}

/** A tool call's `arguments` as the object providers take; an empty string means no arguments. */
export function parseToolArguments(args: string, param: string): Record<string, unknown> {
  if (args.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    parsed = undefined;
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new BadRequest('Tool call arguments must be a JSON object.', { param });
  }
  return parsed as Record<string, unknown>;
}
