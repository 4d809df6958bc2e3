import { z } from 'zod';

// The chat completion request exactly as the interface specifies it. Unknown top-level
// fields are kept (passed through to providers that accept them).

const nullableNumberIn = (min: number, max: number) => z.number().min(min).max(max).nullable().optional();
// int64 bounds as JSON numbers parse: 2^63 - 1 itself arrives as the double 2^63.
const INT64_MIN = -(2 ** 63);
const INT64_MAX = 2 ** 63;

const name = z.string();

const functionObject = z.looseObject({
  name: z.string(),
  description: z.string().optional(),
  parameters: z.record(z.string(), z.unknown()).optional(),
  strict: z.boolean().nullable().optional(),
});

const toolCall = z.looseObject({
  id: z.string(),
  type: z.literal('function'),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
});

const textPart = z.looseObject({ type: z.literal('text'), text: z.string() });
const imagePart = z.looseObject({
  type: z.literal('image_url'),
  image_url: z.looseObject({
    url: z.string().refine((v) => URL.canParse(v), 'a URI'),
    detail: z.enum(['auto', 'low', 'high']).optional(),
  }),
});
const userContentPart = z.discriminatedUnion('type', [textPart, imagePart]);

export const chatMessage = z.discriminatedUnion('role', [
  z.looseObject({ role: z.literal('system'), content: z.string(), name: name.optional() }),
  z.looseObject({ role: z.literal('developer'), content: z.string(), name: name.optional() }),
  z.looseObject({
    role: z.literal('user'),
    content: z.union([z.string(), z.array(userContentPart).min(1)]),
    name: name.optional(),
  }),
  z.looseObject({
    role: z.literal('assistant'),
    content: z.string().nullable().optional(),
    name: name.optional(),
    tool_calls: z.array(toolCall).optional(),
    function_call: z.looseObject({ arguments: z.string(), name: z.string() }).nullable().optional(),
  }),
  z.looseObject({ role: z.literal('tool'), content: z.string(), tool_call_id: z.string() }),
  z.looseObject({ role: z.literal('function'), content: z.string().nullable(), name: z.string() }),
]);

const responseFormat = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text') }),
  z.looseObject({ type: z.literal('json_object') }),
  z.looseObject({
    type: z.literal('json_schema'),
    json_schema: z.looseObject({
      name: z.string(),
      description: z.string().optional(),
      schema: z.record(z.string(), z.unknown()).optional(),
      strict: z.boolean().nullable().optional(),
    }),
  }),
]);

export const chatCompletionRequest = z.looseObject({
  messages: z.array(chatMessage).min(1),
  model: z.string(),
  frequency_penalty: nullableNumberIn(-2, 2),
  presence_penalty: nullableNumberIn(-2, 2),
  logit_bias: z.record(z.string(), z.number().int()).nullable().optional(),
  logprobs: z.boolean().nullable().optional(),
  top_logprobs: z.number().int().min(0).max(20).nullable().optional(),
  max_tokens: z.number().int().nullable().optional(),
  max_completion_tokens: z.number().int().nullable().optional(),
  n: z.number().int().min(1).max(128).nullable().optional(),
  response_format: responseFormat.optional(),
  seed: z.number().int().min(INT64_MIN).max(INT64_MAX).nullable().optional(),
  stop: z
    .union([z.string(), z.array(z.string()).min(1).max(4)])
    .nullable()
    .optional(),
  stream: z.boolean().nullable().optional(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullable().optional(),
  thinking: z
    .object({ type: z.enum(['enabled', 'disabled']), budget_tokens: z.number().int().min(1).optional() })
    .nullable()
    .optional(),
  temperature: nullableNumberIn(0, 2),
  top_p: nullableNumberIn(0, 1),
  tools: z.array(z.looseObject({ type: z.literal('function'), function: functionObject })).optional(),
  tool_choice: z
    .union([
      z.enum(['none', 'auto', 'required']),
      z.looseObject({ type: z.literal('function'), function: z.looseObject({ name: z.string() }) }),
    ])
    .optional(),
  parallel_tool_calls: z.boolean().optional(),
  user: z.string().optional(),
  function_call: z.union([z.enum(['none', 'auto']), z.looseObject({ name: z.string() })]).optional(),
  functions: z
    .array(
      z.looseObject({
        name: z.string(),
        description: z.string().optional(),
        parameters: z.record(z.string(), z.unknown()).optional(),
      }),
    )
    .min(1)
    .max(128)
    .optional(),
});

export type ChatCompletionRequest = z.output<typeof chatCompletionRequest>;
