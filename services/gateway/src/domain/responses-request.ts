import { BadRequest } from '@switchyard/core';
import { REASONING_EFFORTS } from './reasoning-effort.ts';
import {
  reasoningOfEncryptedContent,
  withThoughtSignature,
  type ReasoningBlock,
} from './responses-reasoning.ts';

// A Responses API request translated into a chat completion request, for providers that have no
// Responses API of their own: the answer is then translated back (see responses-answer.ts).

type Json = Record<string, unknown>;

/** A Responses request as the route checked it (http/responses-request.schema.ts). */
export interface ResponsesBody extends Json {
  model: string;
  input?: string | Json[] | undefined;
  instructions?: string | null | undefined;
  previous_response_id?: string | null | undefined;
  tools?: Json[] | undefined;
  tool_choice?: string | Json | undefined;
  temperature?: number | null | undefined;
  top_p?: number | null | undefined;
  max_output_tokens?: number | null | undefined;
  stream?: boolean | null | undefined;
  store?: boolean | null | undefined;
  text?: { format?: Json | undefined } | null | undefined;
  reasoning?: { effort?: string | null | undefined; summary?: string | null | undefined } | null | undefined;
  include?: string[] | null | undefined;
  metadata?: Record<string, string> | null | undefined;
  user?: string | undefined;
  parallel_tool_calls?: boolean | null | undefined;
}

/** A chat message as the chat completion request has it. */
export type ChatMessage = Json & { role: string };

/** Fields a translated request cannot honour: the provider has nothing like them. */
const REFUSED_FIELDS: Array<[string, (value: unknown) => boolean, string]> = [
  ['background', (v) => v === true, 'background responses'],
  ['conversation', (v) => v !== undefined && v !== null, 'conversations'],
  ['prompt', (v) => v !== undefined && v !== null, 'prompt templates'],
];

const TRANSLATED =
  'this provider has no Responses API: the gateway translates the request into a chat completion, which has no';

/**
 * The chat completion request for a Responses request: `instructions` as a system message,
 * then the earlier turns (`history`, from `previous_response_id`), then `input`. Only function
 * tools translate: a built-in tool (web search, file search, ...) is refused, naming it.
 */
export function chatRequestOf(body: ResponsesBody, history: ChatMessage[] = []): Json {
  for (const [field, present, what] of REFUSED_FIELDS) {
    if (present(body[field])) {
      throw new BadRequest(`'${field}' is not supported: ${TRANSLATED} ${what}.`, {
        param: field,
        code: 'unsupported_parameter',
      });
    }
  }
  const messages: ChatMessage[] = [];
  if (body.instructions) messages.push({ role: 'system', content: body.instructions });
  messages.push(...history, ...inputMessages(body.input));
  if (messages.length === 0) {
    throw new BadRequest('The request has no input.', { param: 'input', code: 'missing_input' });
  }
  const chat: Json = { model: body.model, messages };
  if (body.tools?.length) chat.tools = body.tools.map((tool, i) => chatTool(tool, i));
  if (body.tool_choice !== undefined) chat.tool_choice = chatToolChoice(body.tool_choice);
  if (body.temperature != null) chat.temperature = body.temperature;
  if (body.top_p != null) chat.top_p = body.top_p;
  if (body.max_output_tokens != null) chat.max_completion_tokens = body.max_output_tokens;
  if (body.parallel_tool_calls != null) chat.parallel_tool_calls = body.parallel_tool_calls;
  if (body.user !== undefined) chat.user = body.user;
  const effort = body.reasoning?.effort;
  if (effort) {
    if (!REASONING_EFFORTS.includes(effort)) {
      throw new BadRequest(`reasoning.effort must be one of ${REASONING_EFFORTS.join(', ')}.`, {
        param: 'reasoning.effort',
        code: 'invalid_value',
      });
    }
    // Each provider's adapter reads it in its own terms (see reasoningForProvider).
    chat.reasoning_effort = effort;
  }
  const format = responseFormat(body.text?.format);
  if (format) chat.response_format = format;
  if (body.stream) {
    chat.stream = true;
    // The usage closes the translated stream (response.completed carries it).
    chat.stream_options = { include_usage: true };
  }
  return chat;
}

/** The chat messages of a request's `input`: a string is one user message. */
export function inputMessages(input: ResponsesBody['input']): ChatMessage[] {
  if (input === undefined) return [];
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  const messages: ChatMessage[] = [];
  /** Thought signatures reasoning items handed back, for the calls that follow them. */
  const signatures = new Map<string, string>();
  input.forEach((item, i) => {
    const param = `input[${i}]`;
    const type = item.type ?? 'message';
    switch (type) {
      case 'message': {
        const message = roleMessage(item, param);
        const last = messages.at(-1);
        // The text after the turn's reasoning goes on in the same assistant message.
        if (message.role === 'assistant' && last && reasoningOnly(last)) {
          const text = message.content as string;
          last.content = text;
          (last.content_blocks as unknown[]).push({ type: 'text', text });
        } else {
          messages.push(message);
        }
        return;
      }
      case 'function_call': {
        const id = stringField(item, 'call_id', param);
        const signature = signatures.get(id);
        const call = {
          id,
          type: 'function',
          function: {
            name: stringField(item, 'name', param),
            arguments: stringField(item, 'arguments', param),
          },
          ...(signature ? withThoughtSignature(signature) : {}),
        };
        const last = messages.at(-1);
        // Calls of one turn (and the text before them) are one assistant message.
        if (last?.role === 'assistant') {
          last.tool_calls = [...((last.tool_calls as unknown[] | undefined) ?? []), call];
        } else {
          messages.push({ role: 'assistant', content: null, tool_calls: [call] });
        }
        return;
      }
      case 'function_call_output':
        messages.push({
          role: 'tool',
          tool_call_id: stringField(item, 'call_id', param),
          content: textOf(item.output, `${param}.output`, ['input_text', 'output_text']),
        });
        return;
      case 'reasoning': {
        // What the provider signed or redacted goes back as the assistant turn's thinking; a
        // summary alone, or another provider's encrypted content, is nothing a provider can take.
        const { blocks, calls } = reasoningOfEncryptedContent(
          item.encrypted_content,
          `${param}.encrypted_content`,
        );
        for (const [id, signature] of Object.entries(calls)) signatures.set(id, signature);
        if (blocks.length === 0) return;
        const last = messages.at(-1);
        if (last?.role === 'assistant') withThinking(last, blocks);
        else messages.push(withThinking({ role: 'assistant', content: null }, blocks));
        return;
      }
      default:
        throw new BadRequest(`Input items of type '${type}' are not supported: ${TRANSLATED} such items.`, {
          param: `${param}.type`,
          code: 'unsupported_input_item',
        });
    }
  });
  return messages;
}

/** The message with thinking blocks after what it already has, in `content_blocks` as chat answers carry them. */
function withThinking(message: ChatMessage, blocks: ReasoningBlock[]): ChatMessage {
  if (!Array.isArray(message.content_blocks)) {
    const text = typeof message.content === 'string' ? message.content : '';
    message.content_blocks = text === '' ? [] : [{ type: 'text', text }];
  }
  (message.content_blocks as unknown[]).push(...blocks);
  return message;
}

/** An assistant message that has only thinking so far: the turn's text and calls go on in it. */
function reasoningOnly(message: ChatMessage): boolean {
  return (
    message.role === 'assistant' &&
    message.content === null &&
    message.tool_calls === undefined &&
    Array.isArray(message.content_blocks)
  );
}

function roleMessage(item: Json, param: string): ChatMessage {
  const role = item.role;
  const content = item.content;
  switch (role) {
    case 'system':
    case 'developer':
      return { role, content: textOf(content, `${param}.content`, ['input_text']) };
    case 'assistant':
      return { role, content: textOf(content, `${param}.content`, ['output_text', 'input_text', 'refusal']) };
    case 'user':
      return { role, content: userContent(content, `${param}.content`) };
    default:
      throw new BadRequest('A message item needs a role: user, assistant, system or developer.', {
        param: `${param}.role`,
      });
  }
}

/** A user message's content: text, or text and image parts. */
function userContent(content: unknown, param: string): string | Json[] {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content) || content.length === 0) {
    throw new BadRequest('Content must be a string or a non-empty array of parts.', { param });
  }
  return content.map((part: Json, i) => {
    const at = `${param}[${i}]`;
    if (part?.type === 'input_text') return { type: 'text', text: stringField(part, 'text', at) };
    if (part?.type === 'input_image') {
      if (typeof part.image_url !== 'string') {
        throw new BadRequest(
          `An image must be given by its image_url (a URL or a data URL): ${TRANSLATED} stored files.`,
          { param: `${at}.image_url`, code: 'unsupported_content' },
        );
      }
      const detail = part.detail === 'low' || part.detail === 'high' ? { detail: part.detail } : {};
      return { type: 'image_url', image_url: { url: part.image_url, ...detail } };
    }
    throw new BadRequest(
      `Content parts of type '${String(part?.type)}' are not supported: ${TRANSLATED} such parts.`,
      {
        param: `${at}.type`,
        code: 'unsupported_content',
      },
    );
  });
}

/** Text content: a string, or the text of parts of the given types, joined. */
function textOf(content: unknown, param: string, types: string[]): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content))
    throw new BadRequest('Content must be a string or an array of parts.', { param });
  return content
    .map((part: Json, i) => {
      if (!types.includes(String(part?.type))) {
        throw new BadRequest(`Content parts of type '${String(part?.type)}' are not supported here.`, {
          param: `${param}[${i}].type`,
          code: 'unsupported_content',
        });
      }
      return String(part.text ?? part.refusal ?? '');
    })
    .join('');
}

function stringField(item: Json, name: string, param: string): string {
  const value = item[name];
  if (typeof value !== 'string')
    throw new BadRequest(`'${name}' must be a string.`, { param: `${param}.${name}` });
  return value;
}

function chatTool(tool: Json, i: number): Json {
  if (tool.type !== 'function') {
    throw new BadRequest(
      `The '${String(tool.type)}' tool is not supported: ${TRANSLATED} built-in tools, only function tools.`,
      { param: `tools[${i}].type`, code: 'unsupported_tool' },
    );
  }
  const fn: Json = { name: stringField(tool, 'name', `tools[${i}]`) };
  if (typeof tool.description === 'string') fn.description = tool.description;
  if (tool.parameters && typeof tool.parameters === 'object') fn.parameters = tool.parameters;
  if (typeof tool.strict === 'boolean') fn.strict = tool.strict;
  return { type: 'function', function: fn };
}

function chatToolChoice(choice: string | Json): unknown {
  if (typeof choice === 'string') return choice;
  if (choice.type === 'function' && typeof choice.name === 'string') {
    return { type: 'function', function: { name: choice.name } };
  }
  throw new BadRequest(
    `A tool_choice of type '${String(choice.type)}' is not supported: ${TRANSLATED} built-in tools.`,
    { param: 'tool_choice', code: 'unsupported_tool' },
  );
}

/** `text.format` as a chat `response_format`. */
function responseFormat(format: Json | undefined): Json | undefined {
  if (!format || format.type === 'text') return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  if (format.type === 'json_schema') {
    const schema: Json = { name: typeof format.name === 'string' ? format.name : 'response' };
    if (typeof format.description === 'string') schema.description = format.description;
    if (format.schema && typeof format.schema === 'object') schema.schema = format.schema;
    if (typeof format.strict === 'boolean') schema.strict = format.strict;
    return { type: 'json_schema', json_schema: schema };
  }
  throw new BadRequest(`A text format of type '${String(format.type)}' is not supported.`, {
    param: 'text.format.type',
  });
}
