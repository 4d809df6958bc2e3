import { z } from 'zod';

// The Anthropic Messages request (`POST /v1/messages`): `messagesEnvelope` is what every request
// must be, checked at the edge, and all a request passed through to Anthropic is checked for (the
// rest, every block and tool type Anthropic knows, is Anthropic's to check); `messagesRequest`
// is the request as far as the gateway translates it into a chat completion request, for every
// other provider. Translated, unknown fields are accepted (and not sent on); `cache_control` on a
// block or tool is accepted and dropped.

const anyBlock = z.looseObject({ type: z.string().min(1) });

/** The Messages request as the gateway reads it whatever the provider: to route it, check it and count it. */
export const messagesEnvelope = z.looseObject({
  model: z.string().min(1),
  max_tokens: z.number().int().min(1),
  messages: z
    .array(
      z.looseObject({
        role: z.enum(['user', 'assistant']),
        content: z.union([z.string(), z.array(anyBlock)]),
      }),
    )
    .min(1),
  system: z.union([z.string(), z.array(anyBlock)]).optional(),
  tools: z.array(z.looseObject({ name: z.string().min(1) })).optional(),
  stream: z.boolean().optional(),
});

const textBlock = z.looseObject({ type: z.literal('text'), text: z.string() });

const imageSource = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('base64'), media_type: z.string().min(1), data: z.string().min(1) }),
  z.looseObject({ type: z.literal('url'), url: z.string().refine((v) => URL.canParse(v), 'a URI') }),
]);
const imageBlock = z.looseObject({ type: z.literal('image'), source: imageSource });

/** Accepted so that its refusal is a clear 400 naming it: no chat message carries a document (passed through, Anthropic reads it). */
const documentBlock = z.looseObject({ type: z.literal('document') });

const toolUseBlock = z.looseObject({
  type: z.literal('tool_use'),
  id: z.string().min(1),
  name: z.string().min(1),
  input: z.record(z.string(), z.unknown()),
});

const toolResultBlock = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1),
  content: z.union([z.string(), z.array(z.discriminatedUnion('type', [textBlock, imageBlock]))]).optional(),
  is_error: z.boolean().optional(),
});

const thinkingBlock = z.looseObject({
  type: z.literal('thinking'),
  thinking: z.string(),
  signature: z.string(),
});
const redactedThinkingBlock = z.looseObject({ type: z.literal('redacted_thinking'), data: z.string() });

const contentBlock = z.discriminatedUnion('type', [
  textBlock,
  imageBlock,
  documentBlock,
  toolUseBlock,
  toolResultBlock,
  thinkingBlock,
  redactedThinkingBlock,
]);

export const messageParam = z.looseObject({
  role: z.enum(['user', 'assistant']),
  content: z.union([z.string(), z.array(contentBlock)]),
});

const customTool = z.looseObject({
  type: z.literal('custom').optional(),
  name: z.string().min(1),
  description: z.string().optional(),
  input_schema: z.record(z.string(), z.unknown()),
});

const parallel = { disable_parallel_tool_use: z.boolean().optional() };
const toolChoice = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('auto'), ...parallel }),
  z.looseObject({ type: z.literal('any'), ...parallel }),
  z.looseObject({ type: z.literal('tool'), name: z.string().min(1), ...parallel }),
  z.looseObject({ type: z.literal('none') }),
]);

export const messagesRequest = z.looseObject({
  model: z.string().min(1),
  max_tokens: z.number().int().min(1),
  messages: z.array(messageParam).min(1),
  system: z.union([z.string(), z.array(textBlock)]).optional(),
  tools: z.array(customTool).optional(),
  tool_choice: toolChoice.optional(),
  temperature: z.number().min(0).max(1).optional(),
  top_p: z.number().min(0).max(1).optional(),
  top_k: z.number().int().min(0).optional(),
  stop_sequences: z.array(z.string()).optional(),
  stream: z.boolean().optional(),
  metadata: z.looseObject({ user_id: z.string().nullable().optional() }).optional(),
  output_config: z
    .looseObject({
      format: z
        .looseObject({ type: z.literal('json_schema'), schema: z.record(z.string(), z.unknown()) })
        .nullable()
        .optional(),
    })
    .optional(),
  thinking: z
    .discriminatedUnion('type', [
      z.looseObject({ type: z.literal('enabled'), budget_tokens: z.number().int().min(1) }),
      z.looseObject({ type: z.literal('disabled') }),
    ])
    .optional(),
});

export type MessagesEnvelope = z.output<typeof messagesEnvelope>;
export type MessagesRequest = z.output<typeof messagesRequest>;
export type MessageParam = z.output<typeof messageParam>;
export type MessageContentBlock = z.output<typeof contentBlock>;
