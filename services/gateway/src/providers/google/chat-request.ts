import { BadRequest } from '@switchyard/core';
import { parseDataUrl, parseToolArguments } from '../openai-format.ts';
import type { ChatBody } from '../types.ts';
import type { Content, FunctionDeclaration, GenerateContentRequest, GenerationConfig, Part } from './wire.ts';

type ChatMessage = ChatBody['messages'][number];
type UserMessage = Extract<ChatMessage, { role: 'user' }>;
type AssistantMessage = Extract<ChatMessage, { role: 'assistant' }>;
type UserPart = Exclude<UserMessage['content'], string>[number];

/** The OpenAI-format request as a Gemini `generateContent` request. */
export function toGenerateContentRequest(body: ChatBody): GenerateContentRequest {
  if (body.functions || body.function_call) {
    throw new BadRequest('The google provider does not support the deprecated functions; use tools.', {
      param: body.functions ? 'functions' : 'function_call',
    });
  }
  const system: Part[] = [];
  const contents: Content[] = [];
  // Gemini answers a call by function name, so each tool message needs the name its call had.
  const callNames = new Map<string, string>();
  let toolResponses: Part[] | undefined;
  body.messages.forEach((message, i) => {
    if (message.role !== 'tool') toolResponses = undefined;
    switch (message.role) {
      case 'system':
      case 'developer':
        if (message.content) system.push({ text: message.content });
        return;
      case 'user':
        contents.push({ role: 'user', parts: userParts(message.content, `messages[${i}].content`) });
        return;
      case 'assistant': {
        message.tool_calls?.forEach((call) => callNames.set(call.id, call.function.name));
        const parts = modelParts(message, `messages[${i}]`);
        if (parts.length) contents.push({ role: 'model', parts });
        return;
      }
      case 'tool': {
        const name = callNames.get(message.tool_call_id);
        if (!name) {
          throw new BadRequest('A tool message must answer a tool call of an earlier assistant message.', {
            param: `messages[${i}].tool_call_id`,
          });
        }
        const part: Part = { functionResponse: { name, response: toolResponse(message.content) } };
        // Answers to one round of parallel calls go back together, in one turn.
        if (toolResponses) toolResponses.push(part);
        else contents.push({ role: 'user', parts: (toolResponses = [part]) });
        return;
      }
      case 'function':
        throw new BadRequest(
          'The google provider does not take the deprecated function messages; use tool messages.',
          { param: `messages[${i}].role` },
        );
    }
  });

  const request: GenerateContentRequest = { contents };
  if (system.length) request.systemInstruction = { parts: system };
  if (body.tools?.length) {
    request.tools = [
      {
        functionDeclarations: body.tools.map(({ function: fn }): FunctionDeclaration => ({
          name: fn.name,
          ...(fn.description ? { description: fn.description } : {}),
          ...(fn.parameters
            ? fitsOpenApiSubset(fn.parameters)
              ? { parameters: fn.parameters }
              : { parametersJsonSchema: fn.parameters }
            : {}),
        })),
      },
    ];
  }
  const toolConfig = toToolConfig(body.tool_choice);
  if (toolConfig) request.toolConfig = toolConfig;
  const generationConfig = toGenerationConfig(body);
  if (Object.keys(generationConfig).length) request.generationConfig = generationConfig;
  return request;
}

function userParts(content: UserMessage['content'], param: string): Part[] {
  if (typeof content === 'string') return [{ text: content }];
  return content.map((part, j) => userPart(part, `${param}[${j}]`));
}

function userPart(part: UserPart, param: string): Part {
  if (part.type === 'text') return { text: part.text };
  const url = part.image_url.url;
  const inline = parseDataUrl(url);
  if (inline) return { inlineData: { mimeType: inline.mediaType, data: inline.data } };
  if (/^(https?|gs):/i.test(url)) {
    const mimeType = imageTypeOf(url);
    return { fileData: { ...(mimeType ? { mimeType } : {}), fileUri: url } };
  }
  throw new BadRequest('The google provider takes images as data:, http(s) or gs:// URLs.', {
    param: `${param}.image_url.url`,
  });
}

const IMAGE_TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  heic: 'image/heic',
  heif: 'image/heif',
};

function imageTypeOf(url: string): string | undefined {
  const extension = /\.([a-z0-9]+)$/i.exec(new URL(url).pathname)?.[1]?.toLowerCase();
  return extension ? IMAGE_TYPES[extension] : undefined;
}

/**
 * A model turn. A tool call's thought signature, which Gemini 3 requires back, travels
 * through the client in `extra_content.google.thought_signature`, as Google's own
 * OpenAI-compatible endpoint carries it.
 */
function modelParts(message: AssistantMessage, param: string): Part[] {
  if (message.function_call) {
    throw new BadRequest('The google provider does not take the deprecated function_call; use tool_calls.', {
      param: `${param}.function_call`,
    });
  }
  const parts: Part[] = message.content ? [{ text: message.content }] : [];
  message.tool_calls?.forEach((call, j) => {
    const signature = thoughtSignatureOf(call.extra_content);
    parts.push({
      functionCall: {
        name: call.function.name,
        args: parseToolArguments(call.function.arguments, `${param}.tool_calls[${j}].function.arguments`),
      },
      ...(signature ? { thoughtSignature: signature } : {}),
    });
  });
  return parts;
}

function thoughtSignatureOf(extra: unknown): string | undefined {
  const google = (extra as { google?: { thought_signature?: unknown } } | undefined)?.google;
  return typeof google?.thought_signature === 'string' ? google.thought_signature : undefined;
}

/** Gemini takes an object as a function's response: a JSON object as it is, anything else as `output`. */
function toolResponse(content: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(content);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
      return parsed as Record<string, unknown>;
  } catch {
    // Plain text.
  }
  return { output: content };
}

function toToolConfig(choice: ChatBody['tool_choice']): GenerateContentRequest['toolConfig'] {
  if (choice === undefined) return undefined;
  if (choice === 'none') return { functionCallingConfig: { mode: 'NONE' } };
  if (choice === 'auto') return { functionCallingConfig: { mode: 'AUTO' } };
  if (choice === 'required') return { functionCallingConfig: { mode: 'ANY' } };
  return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.function.name] } };
}

function toGenerationConfig(body: ChatBody): GenerationConfig {
  const config: GenerationConfig = {};
  if (body.temperature != null) config.temperature = body.temperature;
  if (body.top_p != null) config.topP = body.top_p;
  if (typeof body.top_k === 'number') config.topK = body.top_k;
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  if (maxTokens != null) config.maxOutputTokens = maxTokens;
  if (body.stop != null) config.stopSequences = typeof body.stop === 'string' ? [body.stop] : body.stop;
  if (body.n != null) config.candidateCount = body.n;
  if (body.seed != null) config.seed = body.seed;
  if (body.presence_penalty != null) config.presencePenalty = body.presence_penalty;
  if (body.frequency_penalty != null) config.frequencyPenalty = body.frequency_penalty;
  if (body.logprobs) {
    config.responseLogprobs = true;
    if (body.top_logprobs != null) config.logprobs = body.top_logprobs;
  }
  const format = body.response_format;
  if (format?.type === 'json_object') config.responseMimeType = 'application/json';
  if (format?.type === 'json_schema') {
    config.responseMimeType = 'application/json';
    const schema = format.json_schema.schema;
    if (schema && fitsOpenApiSubset(schema)) config.responseSchema = schema;
    else if (schema) config.responseJsonSchema = schema;
  }
  if (body.thinking?.type === 'enabled') {
    config.thinkingConfig = {
      includeThoughts: true,
      ...(body.thinking.budget_tokens !== undefined ? { thinkingBudget: body.thinking.budget_tokens } : {}),
    };
  }
  if (body.thinking?.type === 'disabled') config.thinkingConfig = { thinkingBudget: 0 };
  return config;
}

/**
 * The keywords of the OpenAPI subset that `parameters` and `responseSchema` take, which every
 * model accepts. A schema that goes beyond it (`additionalProperties`, `$ref`, type arrays, ...)
 * is sent as `parametersJsonSchema` / `responseJsonSchema`, which take full JSON Schema.
 */
const OPENAPI_SUBSET = new Set([
  'type',
  'format',
  'title',
  'description',
  'nullable',
  'enum',
  'items',
  'minItems',
  'maxItems',
  'properties',
  'required',
  'minProperties',
  'maxProperties',
  'propertyOrdering',
  'minLength',
  'maxLength',
  'pattern',
  'minimum',
  'maximum',
  'anyOf',
  'default',
  'example',
]);

function fitsOpenApiSubset(schema: unknown): boolean {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return false;
  return Object.entries(schema).every(([keyword, value]) => {
    if (!OPENAPI_SUBSET.has(keyword)) return false;
    if (keyword === 'type') return typeof value === 'string';
    if (keyword === 'items') return fitsOpenApiSubset(value);
    if (keyword === 'anyOf') return Array.isArray(value) && value.every(fitsOpenApiSubset);
    if (keyword === 'properties') {
      return !!value && typeof value === 'object' && Object.values(value).every(fitsOpenApiSubset);
    }
    return true;
  });
}
