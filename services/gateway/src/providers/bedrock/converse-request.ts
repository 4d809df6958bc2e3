import { BadRequest } from '@switchyard/core';
import type { ChatBody } from '../types.ts';
import type {
  ConverseContentBlock,
  ConverseMessage,
  ConverseRequest,
  ConverseToolChoice,
  ImageFormat,
} from './converse-types.ts';

type Message = ChatBody['messages'][number];
type UserContent = Extract<Message, { role: 'user' }>['content'];
type AssistantMessage = Extract<Message, { role: 'assistant' }>;

const IMAGE_FORMATS: Record<string, ImageFormat> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/jpg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

const DATA_URI = /^data:([\w/+.-]+);base64,(.*)$/s;

function unsupported(message: string, param: string): BadRequest {
  return new BadRequest(`bedrock: ${message}`, { param, code: 'unsupported_parameter' });
}

/** Extended thinking is a model-native field, which Bedrock accepts only for Anthropic models. */
function isAnthropicModel(modelId: string): boolean {
  return /(^|[./:])anthropic\./.test(modelId);
}

function imageBlock(url: string, param: string): ConverseContentBlock {
  const match = DATA_URI.exec(url);
  if (!match) {
    throw unsupported(
      'Converse takes images only as bytes: send the image as a base64 data: URI, not a URL.',
      param,
    );
  }
  const format = IMAGE_FORMATS[match[1]!.toLowerCase()];
  if (!format) {
    throw new BadRequest(`bedrock: image type ${match[1]} is not supported (png, jpeg, gif or webp).`, {
      param,
      code: 'invalid_image_format',
    });
  }
  return { image: { format, source: { bytes: match[2]! } } };
}

function userBlocks(content: UserContent, index: number): ConverseContentBlock[] {
  if (typeof content === 'string') return content ? [{ text: content }] : [];
  return content.map((part, j) =>
    part.type === 'text'
      ? { text: part.text }
      : imageBlock(part.image_url.url, `messages[${index}].content[${j}].image_url.url`),
  );
}

/** Reasoning a client hands back (as our responses gave it) must precede the turn's text for tool use with thinking. */
function reasoningBlocks(message: AssistantMessage): ConverseContentBlock[] {
  const blocks = (message as { content_blocks?: unknown }).content_blocks;
  if (!Array.isArray(blocks)) return [];
  return blocks.flatMap((block): ConverseContentBlock[] => {
    if (block?.type === 'thinking' && typeof block.thinking === 'string') {
      return [
        {
          reasoningContent: {
            reasoningText: {
              text: block.thinking,
              ...(typeof block.signature === 'string' ? { signature: block.signature } : {}),
            },
          },
        },
      ];
    }
    if (block?.type === 'redacted_thinking' && typeof block.data === 'string') {
      return [{ reasoningContent: { redactedContent: block.data } }];
    }
    return [];
  });
}

function assistantBlocks(message: AssistantMessage, index: number): ConverseContentBlock[] {
  const blocks = reasoningBlocks(message);
  if (message.content) blocks.push({ text: message.content });
  (message.tool_calls ?? []).forEach((call, j) => {
    let input: unknown = {};
    if (call.function.arguments.trim()) {
      try {
        input = JSON.parse(call.function.arguments);
      } catch {
        throw new BadRequest('bedrock: tool call arguments must be a JSON object.', {
          param: `messages[${index}].tool_calls[${j}].function.arguments`,
          code: 'invalid_value',
        });
      }
    }
    blocks.push({ toolUse: { toolUseId: call.id, name: call.function.name, input } });
  });
  if (message.function_call) {
    throw unsupported(
      'the deprecated function_call is not supported; use tool_calls.',
      `messages[${index}].function_call`,
    );
  }
  return blocks;
}

/** Converse wants alternating turns: consecutive messages of one role (e.g. several tool results) become one turn. */
function toTurns(messages: Message[]): { system: Array<{ text: string }>; turns: ConverseMessage[] } {
  const system: Array<{ text: string }> = [];
  const turns: ConverseMessage[] = [];
  const append = (role: ConverseMessage['role'], content: ConverseContentBlock[]) => {
    if (content.length === 0) return;
    const last = turns.at(-1);
    if (last?.role === role) last.content.push(...content);
    else turns.push({ role, content });
  };
  messages.forEach((message, i) => {
    switch (message.role) {
      case 'system':
      case 'developer':
        if (message.content) system.push({ text: message.content });
        break;
      case 'user':
        append('user', userBlocks(message.content, i));
        break;
      case 'assistant':
        append('assistant', assistantBlocks(message, i));
        break;
      case 'tool':
        append('user', [
          { toolResult: { toolUseId: message.tool_call_id, content: [{ text: message.content }] } },
        ]);
        break;
      case 'function':
        throw unsupported(
          'the deprecated function role is not supported; use tool messages.',
          `messages[${i}].role`,
        );
    }
  });
  return { system, turns };
}

function toolChoice(choice: ChatBody['tool_choice']): ConverseToolChoice | undefined {
  if (choice === 'auto') return { auto: {} };
  if (choice === 'required') return { any: {} };
  if (typeof choice === 'object') return { tool: { name: choice.function.name } };
  return undefined;
}

/** The fields that are set, or undefined when none is. */
function definedOnly<T extends object>(value: T): { [K in keyof T]?: NonNullable<T[K]> } | undefined {
  const entries = Object.entries(value).filter(([, v]) => v !== undefined && v !== null);
  return entries.length ? (Object.fromEntries(entries) as { [K in keyof T]?: NonNullable<T[K]> }) : undefined;
}

/** The OpenAI-format request as a Converse (or ConverseStream) body. */
export function toConverseRequest(body: ChatBody): ConverseRequest {
  if (body.functions)
    throw unsupported('the deprecated functions are not supported; use tools.', 'functions');
  if (body.n != null && body.n > 1) throw unsupported('Converse returns one choice: n must be 1.', 'n');
  const { system, turns } = toTurns(body.messages);
  const request: ConverseRequest = { messages: turns };
  if (system.length) request.system = system;

  const stop = typeof body.stop === 'string' ? [body.stop] : (body.stop ?? undefined);
  const inferenceConfig = definedOnly({
    maxTokens: body.max_completion_tokens ?? body.max_tokens,
    temperature: body.temperature,
    topP: body.top_p,
    stopSequences: stop,
  });
  if (inferenceConfig) request.inferenceConfig = inferenceConfig;

  if (body.tools?.length && body.tool_choice !== 'none') {
    const choice = toolChoice(body.tool_choice);
    request.toolConfig = {
      tools: body.tools.map(({ function: fn }) => ({
        toolSpec: {
          name: fn.name,
          ...(fn.description ? { description: fn.description } : {}),
          inputSchema: { json: fn.parameters ?? { type: 'object', properties: {} } },
        },
      })),
      ...(choice ? { toolChoice: choice } : {}),
    };
  }

  const format = body.response_format;
  if (format?.type === 'json_object') {
    throw unsupported(
      'Converse has no JSON mode without a schema: use response_format json_schema with a schema.',
      'response_format',
    );
  }
  if (format?.type === 'json_schema') {
    const { name, description, schema } = format.json_schema;
    if (!schema)
      throw unsupported('response_format json_schema needs a schema.', 'response_format.json_schema.schema');
    request.outputConfig = {
      textFormat: {
        type: 'json_schema',
        structure: {
          jsonSchema: {
            schema: JSON.stringify(schema),
            ...(name ? { name } : {}),
            ...(description ? { description } : {}),
          },
        },
      },
    };
  }

  if (body.thinking && isAnthropicModel(body.model)) {
    const { type, budget_tokens } = body.thinking;
    request.additionalModelRequestFields = {
      thinking: { type, ...(budget_tokens !== undefined ? { budget_tokens } : {}) },
    };
  }
  return request;
}
