import { randomBytes } from 'node:crypto';
import { UpstreamError } from '@switchyard/core';
import type {
  ChatCompletion,
  ContentBlock,
  FinishReason,
  TokenLogprob,
  ToolCall,
  Usage,
} from '../openai-format.ts';
import type {
  Candidate,
  ErrorBody,
  GenerateContentResponse,
  LogprobsResult,
  Part,
  UsageMetadata,
} from './wire.ts';

/** A tool call with the thought signature Gemini wants back with it (see chat-request.ts). */
export type GeminiToolCall = ToolCall & { extra_content?: { google: { thought_signature: string } } };

export interface TranslationContext {
  created: number;
  /** The requested model, for a response that does not name one. */
  model: string;
  /** Gemini's calls often carry no id, but OpenAI clients answer a call by its id. */
  newToolCallId: () => string;
}

export const newToolCallId = () => `call_${randomBytes(12).toString('hex')}`;
export const newCompletionId = () => `chatcmpl-${randomBytes(12).toString('hex')}`;

const FILTERED = [
  'SAFETY',
  'RECITATION',
  'BLOCKLIST',
  'PROHIBITED_CONTENT',
  'SPII',
  'LANGUAGE',
  'IMAGE_SAFETY',
  'IMAGE_PROHIBITED_CONTENT',
  'IMAGE_RECITATION',
  'IMAGE_OTHER',
];

/** Gemini says STOP when it calls a function; the calls themselves say `tool_calls`. */
export function finishReason(reason: string | undefined, calledTools: boolean): FinishReason {
  if (reason === 'MAX_TOKENS') return 'length';
  if (reason && FILTERED.includes(reason)) return 'content_filter';
  return calledTools ? 'tool_calls' : 'stop';
}

/** `candidatesTokenCount` leaves out thinking, which OpenAI counts as completion. */
export function usageOf(usage: UsageMetadata): Usage {
  const prompt = (usage.promptTokenCount ?? 0) + (usage.toolUsePromptTokenCount ?? 0);
  const completion = (usage.candidatesTokenCount ?? 0) + (usage.thoughtsTokenCount ?? 0);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: usage.totalTokenCount ?? prompt + completion,
    prompt_tokens_details: { cached_tokens: usage.cachedContentTokenCount ?? 0 },
    ...(usage.thoughtsTokenCount !== undefined
      ? { completion_tokens_details: { reasoning_tokens: usage.thoughtsTokenCount } }
      : {}),
  };
}

export function toolCallOf(call: NonNullable<Part['functionCall']>, part: Part, id: string): GeminiToolCall {
  return {
    id,
    type: 'function',
    function: { name: call.name, arguments: JSON.stringify(call.args ?? {}) },
    ...(part.thoughtSignature
      ? { extra_content: { google: { thought_signature: part.thoughtSignature } } }
      : {}),
  };
}

export function logprobsOf(result: LogprobsResult | undefined): { content: TokenLogprob[] } | null {
  if (!result?.chosenCandidates) return null;
  const entry = (c: { token?: string; logProbability?: number }) => ({
    token: c.token ?? '',
    logprob: c.logProbability ?? 0,
    bytes: [...Buffer.from(c.token ?? '', 'utf8')],
  });
  return {
    content: result.chosenCandidates.map((chosen, i) => ({
      ...entry(chosen),
      top_logprobs: (result.topCandidates?.[i]?.candidates ?? []).map(entry),
    })),
  };
}

/** Whether a part is thinking or answer text, for `content_blocks`; other parts are neither. */
export function textKind(part: Part): 'thinking' | 'text' | undefined {
  if (typeof part.text !== 'string') return undefined;
  return part.thought ? 'thinking' : 'text';
}

function choiceOf(candidate: Candidate, position: number, context: TranslationContext) {
  const parts = candidate.content?.parts ?? [];
  const texts: string[] = [];
  const toolCalls: GeminiToolCall[] = [];
  const blocks: ContentBlock[] = [];
  for (const part of parts) {
    if (part.functionCall) {
      toolCalls.push(toolCallOf(part.functionCall, part, part.functionCall.id ?? context.newToolCallId()));
    }
    const kind = textKind(part);
    if (!kind) continue;
    if (kind === 'text') texts.push(part.text!);
    // Consecutive parts of one kind make one block, as streamed deltas build it.
    const last = blocks.at(-1);
    if (last?.type === 'thinking' && kind === 'thinking') last.thinking += part.text;
    else if (last?.type === 'text' && kind === 'text') last.text += part.text;
    else
      blocks.push(
        kind === 'thinking' ? { type: 'thinking', thinking: part.text! } : { type: 'text', text: part.text! },
      );
  }
  return {
    index: candidate.index ?? position,
    message: {
      role: 'assistant' as const,
      content: texts.length ? texts.join('') : null,
      ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
      ...(blocks.some((b) => b.type === 'thinking') ? { content_blocks: blocks } : {}),
    },
    logprobs: logprobsOf(candidate.logprobsResult),
    finish_reason: finishReason(candidate.finishReason, toolCalls.length > 0),
  };
}

/**
 * A `generateContent` response as a chat completion: one choice per candidate. A prompt
 * Gemini blocked has no candidates; it becomes one filtered choice with no content.
 */
export function fromGenerateContent(
  response: GenerateContentResponse,
  context: TranslationContext,
): ChatCompletion {
  const choices = (response.candidates ?? []).map((candidate, i) => choiceOf(candidate, i, context));
  if (choices.length === 0) {
    choices.push({
      index: 0,
      message: { role: 'assistant', content: null },
      logprobs: null,
      finish_reason: response.promptFeedback?.blockReason ? 'content_filter' : 'stop',
    });
  }
  return {
    id: response.responseId ?? newCompletionId(),
    object: 'chat.completion',
    created: context.created,
    model: response.modelVersion ?? context.model,
    choices,
    ...(response.usageMetadata ? { usage: usageOf(response.usageMetadata) } : {}),
  };
}

/**
 * Gemini's error body (`{error: {code, message, status, details}}`) as the one error shape.
 * Gemini sends no retry-after header on 429; the delay is in its RetryInfo detail.
 */
export function geminiError(status: number, body: unknown, retryAfterHeader?: string): UpstreamError {
  const error = (body as ErrorBody | undefined)?.error;
  const message =
    error?.message ?? (typeof body === 'string' && body ? body.slice(0, 2_000) : `HTTP ${status}`);
  const retryDelay = error?.details?.find((d) => typeof d.retryDelay === 'string')?.retryDelay as
    string | undefined;
  const seconds = retryDelay ? /^(\d+(?:\.\d+)?)s$/.exec(retryDelay)?.[1] : undefined;
  const retryAfter = retryAfterHeader ?? (seconds ? String(Math.ceil(Number(seconds))) : undefined);
  return new UpstreamError(status, `google error: ${message}`, {
    code: error?.status?.toLowerCase() ?? 'upstream_error',
    headers: retryAfter && /^[\w ,:-]{1,64}$/.test(retryAfter) ? { 'retry-after': retryAfter } : {},
  });
}
