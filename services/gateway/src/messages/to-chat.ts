import { BadRequest } from '@switchyard/core';
import { providerDescriptor } from '@switchyard/rules';
import type { MessageParam, MessagesRequest } from '../http/messages-request.schema.ts';
import type { ContentBlock } from '../providers/openai-format.ts';
import type { ChatBody } from '../providers/types.ts';

type ChatMessage = ChatBody['messages'][number];
type UserPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };
type Block = Exclude<MessageParam['content'], string>[number];

/**
 * An Anthropic Messages request as the chat completion request the gateway routes: system
 * blocks become system messages, tool results tool messages, tool uses tool calls, images
 * image parts (base64 as data: URLs), and thinking blocks sent back go in the assistant's
 * `content_blocks` (as chat answers carry them). `thinking` and `top_k` ride as the chat body's
 * extension fields; `output_config.format` is the response format. What no chat message can
 * carry (documents, images in a tool result) is a 400.
 */
export function toChatBody(request: MessagesRequest): ChatBody {
  const messages: ChatMessage[] = [];
  if (typeof request.system === 'string') {
    if (request.system) messages.push({ role: 'system', content: request.system });
  } else {
    for (const block of request.system ?? []) messages.push({ role: 'system', content: block.text });
  }
  request.messages.forEach((message, i) => {
    const param = `messages[${i}].content`;
    if (message.role === 'user') messages.push(...userMessages(message.content, param));
    else messages.push(assistantMessage(message.content, param));
  });

  const body: ChatBody = { model: request.model, messages, max_tokens: request.max_tokens };
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.top_p !== undefined) body.top_p = request.top_p;
  if (request.top_k !== undefined) body.top_k = request.top_k;
  if (request.stop_sequences?.length) body.stop = request.stop_sequences;
  if (request.stream) {
    body.stream = true;
    // The final message_delta reports the usage: every provider is asked for it.
    body.stream_options = { include_usage: true };
  }
  if (request.tools?.length) {
    body.tools = request.tools.map((tool) => ({
      type: 'function' as const,
      function: {
        name: tool.name,
        ...(tool.description !== undefined ? { description: tool.description } : {}),
        parameters: tool.input_schema,
      },
    }));
  }
  const choice = request.tool_choice;
  if (choice) {
    if (choice.type === 'auto') body.tool_choice = 'auto';
    if (choice.type === 'any') body.tool_choice = 'required';
    if (choice.type === 'none') body.tool_choice = 'none';
    if (choice.type === 'tool') body.tool_choice = { type: 'function', function: { name: choice.name } };
    if (choice.type !== 'none' && choice.disable_parallel_tool_use === true) body.parallel_tool_calls = false;
  }
  if (request.metadata?.user_id) body.user = request.metadata.user_id;
  const format = request.output_config?.format;
  if (format) {
    body.response_format = { type: 'json_schema', json_schema: { name: 'output', schema: format.schema } };
  }
  if (request.thinking) {
    body.thinking =
      request.thinking.type === 'enabled'
        ? { type: 'enabled', budget_tokens: request.thinking.budget_tokens }
        : { type: 'disabled' };
  }
  return body;
}

/** Families whose adapters read the chat body's `thinking` and `top_k`; the others forward the body as OpenAI reads it. */
const EXTENSION_READERS = new Set(['anthropic', 'google', 'bedrock']);

/**
 * The translated body as it goes to `provider`: OpenAI-format providers get it without the
 * extension fields they would refuse (`thinking`, `top_k`). Unchanged, the same object.
 */
export function forProvider(body: ChatBody, provider: string): ChatBody {
  const family = providerDescriptor(provider)?.family;
  if (family && EXTENSION_READERS.has(family)) return body;
  if (body.thinking === undefined && body.top_k === undefined) return body;
  const { thinking: _thinking, top_k: _topK, ...rest } = body;
  return rest as ChatBody;
}

/** A user turn: its tool results first, as tool messages, then the rest as one user message. */
function userMessages(content: MessageParam['content'], param: string): ChatMessage[] {
  if (typeof content === 'string') return [{ role: 'user', content }];
  const tools: ChatMessage[] = [];
  const parts: UserPart[] = [];
  content.forEach((block, j) => {
    const at = `${param}[${j}]`;
    switch (block.type) {
      case 'text':
        parts.push({ type: 'text', text: block.text });
        return;
      case 'image':
        parts.push(imagePart(block));
        return;
      case 'tool_result':
        tools.push({
          role: 'tool',
          tool_call_id: block.tool_use_id,
          content: toolResultText(block.content, `${at}.content`),
          ...(block.is_error === true ? { is_error: true } : {}),
        });
        return;
      default:
        throw refused(block, at, 'a user turn');
    }
  });
  return parts.length ? [...tools, { role: 'user', content: parts }] : tools;
}

/** An assistant turn: its text as content, tool uses as tool calls, thinking as content_blocks. */
function assistantMessage(content: MessageParam['content'], param: string): ChatMessage {
  if (typeof content === 'string') return { role: 'assistant', content };
  const texts: string[] = [];
  const blocks: ContentBlock[] = [];
  const toolCalls: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }> =
    [];
  content.forEach((block, j) => {
    switch (block.type) {
      case 'text':
        texts.push(block.text);
        blocks.push({ type: 'text', text: block.text });
        return;
      case 'thinking':
        blocks.push({ type: 'thinking', thinking: block.thinking, signature: block.signature });
        return;
      case 'redacted_thinking':
        blocks.push({ type: 'redacted_thinking', data: block.data });
        return;
      case 'tool_use':
        toolCalls.push({
          id: block.id,
          type: 'function',
          function: { name: block.name, arguments: JSON.stringify(block.input) },
        });
        return;
      default:
        throw refused(block, `${param}[${j}]`, 'an assistant turn');
    }
  });
  const thinking = blocks.some((b) => b.type !== 'text');
  return {
    role: 'assistant',
    content: texts.length ? texts.join('') : null,
    ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
    ...(thinking ? { content_blocks: blocks } : {}),
  };
}

function imagePart(block: Extract<Block, { type: 'image' }>): UserPart {
  const source = block.source;
  const url = source.type === 'base64' ? `data:${source.media_type};base64,${source.data}` : source.url;
  return { type: 'image_url', image_url: { url } };
}

/** A tool result's content as the text a tool message holds: text blocks joined by a line break. */
function toolResultText(content: Extract<Block, { type: 'tool_result' }>['content'], param: string): string {
  if (content === undefined || typeof content === 'string') return content ?? '';
  return content
    .map((block, k) => {
      if (block.type === 'text') return block.text;
      throw new BadRequest(
        'An image in a tool result cannot be translated for the gateway’s providers; send it in a user text or image block.',
        { param: `${param}[${k}]`, code: 'unsupported_content' },
      );
    })
    .join('\n');
}

function refused(block: Block, param: string, where: string): BadRequest {
  const what = block.type === 'document' ? 'Document blocks are' : `A ${block.type} block in ${where} is`;
  return new BadRequest(`${what} not supported by the gateway’s Messages interface.`, {
    param,
    code: 'unsupported_content',
  });
}
