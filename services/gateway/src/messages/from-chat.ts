import type { ChatCompletion, ContentBlock, FinishReason, Usage } from '../providers/openai-format.ts';

// Chat completion answers as the Anthropic Messages API gives them.

export type MessageBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown };

export interface MessageUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

export interface Message {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: MessageBlock[];
  stop_reason: string | null;
  stop_sequence: string | null;
  usage: MessageUsage;
}

/** A chat choice as it may come: with the extensions some providers add to the OpenAI format. */
export interface ChatChoiceExtras {
  /** The reasoning of OpenAI-compatible reasoning models (DeepSeek, vLLM, ...). */
  reasoning_content?: string | null;
  /** The stop sequence that ended the answer (the anthropic adapter, vLLM). */
  stop_reason?: string | number | null;
}

/** A message id as Anthropic's look: `msg_` first. */
export function messageId(id: string | undefined): string {
  if (!id) return `msg_${Date.now().toString(36)}`;
  return id.startsWith('msg_') ? id : `msg_${id}`;
}

/**
 * Anthropic's stop reason for a chat finish reason. A `stop` that names the stop sequence
 * which ended it (a choice's `stop_reason` string) is `stop_sequence`.
 */
export function stopReasonOf(
  finish: FinishReason | string | null | undefined,
  stopSequence: string | null,
): string | null {
  switch (finish) {
    case null:
    case undefined:
      return null;
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return stopSequence !== null ? 'stop_sequence' : 'end_turn';
  }
}

/** The stop sequence a choice names, if it names one. */
export function stopSequenceOf(extras: ChatChoiceExtras | undefined): string | null {
  return typeof extras?.stop_reason === 'string' ? extras.stop_reason : null;
}

/**
 * Chat usage as Anthropic counts it: the prompt's cache reads and writes apart from
 * `input_tokens` (the chat prompt count includes them).
 */
export function messageUsage(usage: Usage | null | undefined): MessageUsage {
  const cacheRead = usage?.prompt_tokens_details?.cached_tokens ?? 0;
  const cacheWrite = usage?.prompt_tokens_details?.cache_creation_tokens ?? 0;
  return {
    input_tokens: Math.max(0, (usage?.prompt_tokens ?? 0) - cacheRead - cacheWrite),
    output_tokens: usage?.completion_tokens ?? 0,
    cache_creation_input_tokens: cacheWrite,
    cache_read_input_tokens: cacheRead,
  };
}

/** A tool call's arguments as the object Anthropic's `input` is; arguments that are no JSON object stay as text under `arguments`. */
export function toolInput(args: string | undefined): unknown {
  if (!args || args.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(args);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed;
  } catch {
    // kept as text below
  }
  return { arguments: args };
}

/** A chat completion (its first choice) as an Anthropic message. */
export function fromChatCompletion(completion: ChatCompletion): Message {
  const choice = completion.choices?.[0];
  const message = choice?.message;
  const extras = message as ChatChoiceExtras | undefined;
  const content: MessageBlock[] = [];
  if (extras?.reasoning_content)
    content.push({ type: 'thinking', thinking: extras.reasoning_content, signature: '' });
  if (Array.isArray(message?.content_blocks) && message.content_blocks.length) {
    for (const block of message.content_blocks) content.push(fromContentBlock(block));
  } else if (typeof message?.content === 'string' && message.content) {
    content.push({ type: 'text', text: message.content });
  }
  for (const call of message?.tool_calls ?? []) {
    content.push({
      type: 'tool_use',
      id: call.id,
      name: call.function.name,
      input: toolInput(call.function.arguments),
    });
  }
  if (message?.function_call) {
    const call = message.function_call;
    content.push({
      type: 'tool_use',
      id: `call_${call.name}`,
      name: call.name,
      input: toolInput(call.arguments),
    });
  }
  const stopSequence = stopSequenceOf(choice as ChatChoiceExtras | undefined);
  return {
    id: messageId(completion.id),
    type: 'message',
    role: 'assistant',
    model: completion.model ?? '',
    content,
    stop_reason: stopReasonOf(choice?.finish_reason, stopSequence) ?? 'end_turn',
    stop_sequence: stopSequence,
    usage: messageUsage(completion.usage),
  };
}

function fromContentBlock(block: ContentBlock): MessageBlock {
  switch (block.type) {
    case 'thinking':
      return { type: 'thinking', thinking: block.thinking, signature: block.signature ?? '' };
    case 'redacted_thinking':
      return { type: 'redacted_thinking', data: block.data };
    default:
      return { type: 'text', text: block.text };
  }
}

/** The error types Anthropic's SDKs know, by HTTP status. */
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

export function errorType(status: number): string {
  return ERROR_TYPES[status] ?? (status >= 400 && status < 500 ? 'invalid_request_error' : 'api_error');
}

export interface MessagesError {
  type: 'error';
  error: { type: string; message: string; param: string | null; code: string | null };
  request_id?: string;
}

/**
 * The gateway's error body (`{"error":{"message",...}}`) with `status` as Anthropic's error
 * body. The message is kept; so are the gateway's `code` and `param` (null when it has none),
 * beside Anthropic's fields, so the body is in the gateway's one error shape as well; and the
 * body's other fields (a guardrail's `hook_results`).
 */
export function messagesError(status: number, body: unknown, requestId?: string): MessagesError {
  const { error, ...rest } =
    body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  const fields = error && typeof error === 'object' ? (error as Record<string, unknown>) : {};
  const message =
    typeof fields.message === 'string'
      ? fields.message
      : typeof error === 'string'
        ? error
        : 'Request failed.';
  return {
    ...rest,
    type: 'error',
    error: {
      type: errorType(status),
      message,
      // Null when absent, so the body is the gateway's one error shape too.
      param: typeof fields.param === 'string' ? fields.param : null,
      code: typeof fields.code === 'string' ? fields.code : null,
    },
    ...(requestId ? { request_id: requestId } : {}),
  };
}
