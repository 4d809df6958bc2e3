import { BadRequest } from '@switchyard/core';
import { parseDataUrl, parseToolArguments } from '../openai-format.ts';
import type { ChatBody } from '../types.ts';
import type {
  ImageBlock,
  MessageParam,
  MessagesRequest,
  RequestBlock,
  TextBlock,
  ToolChoice,
  ToolResultBlock,
} from './wire.ts';

type ChatMessage = ChatBody['messages'][number];
type UserMessage = Extract<ChatMessage, { role: 'user' }>;
type AssistantMessage = Extract<ChatMessage, { role: 'assistant' }>;
type UserPart = Exclude<UserMessage['content'], string>[number];

/** Anthropic requires `max_tokens`; this is what a request that names none gets. */
export const DEFAULT_MAX_TOKENS = 4096;

/** The OpenAI-format request as a Messages API request. */
export function toMessagesRequest(body: ChatBody): MessagesRequest {
  rejectUnsupported(body);
  const system: string[] = [];
  const messages: MessageParam[] = [];
  let toolResults: ToolResultBlock[] | undefined;
  body.messages.forEach((message, i) => {
    if (message.role !== 'tool') toolResults = undefined;
    switch (message.role) {
      case 'system':
      case 'developer':
        if (message.content) system.push(message.content);
        return;
      case 'user':
        messages.push({ role: 'user', content: userContent(message.content, `messages[${i}].content`) });
        return;
      case 'assistant': {
        const content = assistantContent(message, `messages[${i}]`);
        if (content) messages.push({ role: 'assistant', content });
        return;
      }
      case 'tool': {
        const result: ToolResultBlock = { type: 'tool_result', tool_use_id: message.tool_call_id };
        if (message.content) result.content = message.content;
        // A tool message's `is_error` (as the Messages interface carries a failed tool's result).
        if (message.is_error === true) result.is_error = true;
        // Results of one round of parallel calls answer in a single user turn.
        if (toolResults) toolResults.push(result);
        else messages.push({ role: 'user', content: (toolResults = [result]) });
        return;
      }
      case 'function':
        throw new BadRequest(
          'The anthropic provider does not take the deprecated function messages; use tool messages.',
          { param: `messages[${i}].role` },
        );
    }
  });

  const request: MessagesRequest = {
    model: body.model,
    max_tokens: body.max_completion_tokens ?? body.max_tokens ?? defaultMaxTokens(body),
    messages,
  };
  if (system.length === 1) request.system = system[0]!;
  else if (system.length > 1) request.system = system.map((text): TextBlock => ({ type: 'text', text }));
  if (body.temperature != null) request.temperature = body.temperature;
  if (body.top_p != null) request.top_p = body.top_p;
  if (typeof body.top_k === 'number') request.top_k = body.top_k;
  if (body.stop != null) request.stop_sequences = typeof body.stop === 'string' ? [body.stop] : body.stop;
  if (body.stream) request.stream = true;
  if (body.tools?.length) {
    request.tools = body.tools.map(({ function: fn }) => ({
      name: fn.name,
      ...(fn.description ? { description: fn.description } : {}),
      input_schema: fn.parameters ?? { type: 'object', properties: {} },
    }));
  }
  const toolChoice = toToolChoice(body);
  if (toolChoice) request.tool_choice = toolChoice;
  if (body.thinking) request.thinking = body.thinking;
  if (body.user) request.metadata = { user_id: body.user };
  if (body.response_format?.type === 'json_schema' && body.response_format.json_schema.schema) {
    request.output_config = {
      format: { type: 'json_schema', schema: body.response_format.json_schema.schema },
    };
  }
  return request;
}

function rejectUnsupported(body: ChatBody): void {
  const unsupported = (param: string, message: string) =>
    new BadRequest(`The anthropic provider does not support ${message}.`, { param });
  if (body.n != null && body.n > 1) throw unsupported('n', 'more than one choice (n > 1)');
  if (body.functions || body.function_call) {
    throw unsupported(body.functions ? 'functions' : 'function_call', 'the deprecated functions; use tools');
  }
  if (body.response_format?.type === 'json_object') {
    throw unsupported('response_format', 'response_format json_object; use json_schema with a schema');
  }
}

/** Thinking must fit inside `max_tokens`, so a large budget raises the default. */
function defaultMaxTokens(body: ChatBody): number {
  const budget = body.thinking?.type === 'enabled' ? (body.thinking.budget_tokens ?? 0) : 0;
  return budget >= DEFAULT_MAX_TOKENS ? budget + DEFAULT_MAX_TOKENS : DEFAULT_MAX_TOKENS;
}

function userContent(content: UserMessage['content'], param: string): MessageParam['content'] {
  if (typeof content === 'string') return content;
  return content.map((part, j) => userBlock(part, `${param}[${j}]`));
}

function userBlock(part: UserPart, param: string): TextBlock | ImageBlock {
  if (part.type === 'text') return { type: 'text', text: part.text };
  const url = part.image_url.url;
  const inline = parseDataUrl(url);
  if (inline)
    return { type: 'image', source: { type: 'base64', media_type: inline.mediaType, data: inline.data } };
  if (/^https?:/i.test(url)) return { type: 'image', source: { type: 'url', url } };
  throw new BadRequest('The anthropic provider takes images as data: or http(s) URLs.', {
    param: `${param}.image_url.url`,
  });
}

/**
 * An assistant turn. Thinking blocks a client sends back in `content_blocks` (as responses
 * carry them) go first and unchanged, as Anthropic requires when thinking is on.
 */
function assistantContent(message: AssistantMessage, param: string): MessageParam['content'] | undefined {
  if (message.function_call) {
    throw new BadRequest(
      'The anthropic provider does not take the deprecated function_call; use tool_calls.',
      {
        param: `${param}.function_call`,
      },
    );
  }
  const echoed = Array.isArray(message.content_blocks) ? message.content_blocks.flatMap(echoedBlock) : [];
  const blocks: RequestBlock[] = echoed.length
    ? echoed
    : message.content
      ? [{ type: 'text', text: message.content }]
      : [];
  message.tool_calls?.forEach((call, j) =>
    blocks.push({
      type: 'tool_use',
      id: call.id,
      name: call.function.name,
      input: parseToolArguments(call.function.arguments, `${param}.tool_calls[${j}].function.arguments`),
    }),
  );
  if (blocks.length === 0) return undefined;
  return blocks.length === 1 && blocks[0]!.type === 'text' ? blocks[0]!.text : blocks;
}

function echoedBlock(block: unknown): RequestBlock[] {
  if (!block || typeof block !== 'object') return [];
  const b = block as Record<string, unknown>;
  if (b.type === 'thinking' && typeof b.thinking === 'string' && typeof b.signature === 'string') {
    return [{ type: 'thinking', thinking: b.thinking, signature: b.signature }];
  }
  if (b.type === 'redacted_thinking' && typeof b.data === 'string') {
    return [{ type: 'redacted_thinking', data: b.data }];
  }
  if (b.type === 'text' && typeof b.text === 'string' && b.text) return [{ type: 'text', text: b.text }];
  return [];
}

function toToolChoice(body: ChatBody): ToolChoice | undefined {
  const parallel = body.parallel_tool_calls === false ? { disable_parallel_tool_use: true } : {};
  const choice = body.tool_choice;
  if (choice === 'none') return { type: 'none' };
  if (choice === 'required') return { type: 'any', ...parallel };
  if (typeof choice === 'object') return { type: 'tool', name: choice.function.name, ...parallel };
  if (choice === 'auto' || (body.tools?.length && body.parallel_tool_calls === false)) {
    return { type: 'auto', ...parallel };
  }
  return undefined;
}
