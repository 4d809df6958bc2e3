import { z } from 'zod';

// A Responses API request (POST /v1/responses) as the gateway reads it. Only what it needs to
// route the request, or to translate it into a chat completion for providers without that API,
// is checked here; everything else is kept (and forwarded as it came to providers that have it).

/** One item of `input`: a message by its role, or a typed item (function_call, function_call_output, ...). */
const inputItem = z.looseObject({
  type: z.string().optional(),
  role: z.enum(['user', 'assistant', 'system', 'developer']).optional(),
});

const functionTool = z.looseObject({ type: z.string() });

export const responsesRequest = z.looseObject({
  model: z.string(),
  input: z.union([z.string(), z.array(inputItem)]).optional(),
  instructions: z.string().nullable().optional(),
  previous_response_id: z.string().nullable().optional(),
  tools: z.array(functionTool).optional(),
  tool_choice: z
    .union([z.enum(['none', 'auto', 'required']), z.looseObject({ type: z.string() })])
    .optional(),
  temperature: z.number().min(0).max(2).nullable().optional(),
  top_p: z.number().min(0).max(1).nullable().optional(),
  max_output_tokens: z.number().int().min(1).nullable().optional(),
  stream: z.boolean().nullable().optional(),
  store: z.boolean().nullable().optional(),
  text: z
    .looseObject({ format: z.looseObject({ type: z.string() }).optional() })
    .nullable()
    .optional(),
  reasoning: z
    .looseObject({ effort: z.string().nullable().optional(), summary: z.string().nullable().optional() })
    .nullable()
    .optional(),
  include: z.array(z.string()).nullable().optional(),
  metadata: z.record(z.string(), z.string()).nullable().optional(),
  user: z.string().optional(),
  parallel_tool_calls: z.boolean().nullable().optional(),
});

export type ResponsesRequest = z.output<typeof responsesRequest>;
