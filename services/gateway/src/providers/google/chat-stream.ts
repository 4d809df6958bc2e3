import { UpstreamError } from '@switchyard/core';
import { chunkEncoder, type ChatCompletionChunk, type UpstreamEvent } from '../openai-format.ts';
import {
  finishReason,
  geminiError,
  logprobsOf,
  newCompletionId,
  textKind,
  toolCallOf,
  usageOf,
  type TranslationContext,
} from './chat-response.ts';
import type { ErrorBody, GenerateContentResponse, UsageMetadata } from './wire.ts';

type Delta = ChatCompletionChunk['choices'][number]['delta'];

interface ChoiceState {
  tools: number;
  /** `content_blocks` position of the current run of thinking or text parts. */
  block: number;
  kind: 'thinking' | 'text' | undefined;
  finished: boolean;
}

/**
 * Gemini's stream (each event a `GenerateContentResponse` with only the new parts) as chat
 * completion chunks: for each candidate the role first, then thinking as `content_blocks`
 * deltas, text as content, whole function calls as tool-call deltas, and the finish reason;
 * the usage last when asked for. Gemini ends a stream by closing it, so one that closes before
 * every candidate finished is reported as incomplete.
 */
export async function* chunksFromEvents(
  events: AsyncIterable<UpstreamEvent>,
  options: TranslationContext & { includeUsage: boolean },
): AsyncGenerator<Uint8Array> {
  let encode: ReturnType<typeof chunkEncoder> | undefined;
  let usage: UsageMetadata | undefined;
  const choices = new Map<number, ChoiceState>();

  for await (const { data } of events) {
    const event = JSON.parse(data) as GenerateContentResponse & ErrorBody;
    if (event.error) throw geminiError(event.error.code ?? 502, event);
    encode ??= chunkEncoder({
      id: event.responseId ?? newCompletionId(),
      created: options.created,
      model: event.modelVersion ?? options.model,
    });
    if (event.usageMetadata) usage = event.usageMetadata;
    const candidates = event.candidates ?? [];
    if (candidates.length === 0 && event.promptFeedback?.blockReason) {
      if (!choices.has(0)) yield encode.delta(0, { role: 'assistant', content: '' });
      choices.set(0, { tools: 0, block: 0, kind: undefined, finished: true });
      yield encode.finish(0, 'content_filter');
      continue;
    }
    for (const [position, candidate] of candidates.entries()) {
      const index = candidate.index ?? position;
      let state = choices.get(index);
      if (!state) {
        state = { tools: 0, block: -1, kind: undefined, finished: false };
        choices.set(index, state);
        yield encode.delta(index, { role: 'assistant', content: '' });
      }
      let content = '';
      const thinking: NonNullable<Delta['content_blocks']> = [];
      const toolCalls: NonNullable<Delta['tool_calls']> = [];
      for (const part of candidate.content?.parts ?? []) {
        if (part.functionCall) {
          const call = toolCallOf(part.functionCall, part, part.functionCall.id ?? options.newToolCallId());
          toolCalls.push({ index: state.tools++, ...call });
        }
        const kind = textKind(part);
        if (!kind) continue;
        if (kind !== state.kind) {
          state.block++;
          state.kind = kind;
        }
        if (kind === 'text') content += part.text;
        else thinking.push({ index: state.block, type: 'thinking', thinking: part.text! });
      }
      if (thinking.length) yield encode.delta(index, { content_blocks: thinking });
      const logprobs = logprobsOf(candidate.logprobsResult);
      if (content || logprobs) yield encode.delta(index, { content }, logprobs);
      if (toolCalls.length) yield encode.delta(index, { tool_calls: toolCalls });
      if (candidate.finishReason) {
        state.finished = true;
        yield encode.finish(index, finishReason(candidate.finishReason, state.tools > 0));
      }
    }
  }
  if (!encode || choices.size === 0 || [...choices.values()].some((s) => !s.finished)) {
    throw new UpstreamError(502, 'google: the stream ended before the response was complete.', {
      code: 'upstream_stream_incomplete',
    });
  }
  if (options.includeUsage && usage) yield encode.usage(usageOf(usage));
}
