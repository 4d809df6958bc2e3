import { EventSourceParserStream } from 'eventsource-parser/stream';
import type { ProviderResponse } from './types.ts';

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
  prompt_tokens_details?: { cached_tokens?: number } | null;
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
