// The Bedrock Runtime Converse wire shapes the adapter reads and writes (restJson1).

export type ImageFormat = 'png' | 'jpeg' | 'gif' | 'webp';

export interface ReasoningContent {
  reasoningText?: { text: string; signature?: string };
  redactedContent?: string;
}

/** A union on the wire: exactly one key is set. */
export type ConverseContentBlock =
  | { text: string }
  | { image: { format: ImageFormat; source: { bytes: string } } }
  | { toolUse: { toolUseId: string; name: string; input: unknown } }
  | {
      toolResult: {
        toolUseId: string;
        content: Array<{ text: string }>;
        status?: 'success' | 'error';
      };
    }
  | { reasoningContent: ReasoningContent };

export interface ConverseMessage {
  role: 'user' | 'assistant';
  content: ConverseContentBlock[];
}

export interface ConverseToolSpec {
  toolSpec: { name: string; description?: string; inputSchema: { json: Record<string, unknown> } };
}

export type ConverseToolChoice = { auto: object } | { any: object } | { tool: { name: string } };

export interface ConverseRequest {
  messages: ConverseMessage[];
  system?: Array<{ text: string }>;
  inferenceConfig?: { maxTokens?: number; temperature?: number; topP?: number; stopSequences?: string[] };
  toolConfig?: { tools: ConverseToolSpec[]; toolChoice?: ConverseToolChoice };
  additionalModelRequestFields?: Record<string, unknown>;
  outputConfig?: ConverseOutputConfig;
}

/** Structured output: the answer's text follows a JSON schema, sent as a JSON string. */
export interface ConverseOutputConfig {
  textFormat: {
    type: 'json_schema';
    structure: { jsonSchema: { schema: string; name?: string; description?: string } };
  };
}

export interface ConverseUsage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  cacheReadInputTokens?: number;
  cacheWriteInputTokens?: number;
}

export interface ConverseResponse {
  output: { message?: { role: 'assistant'; content: ConverseContentBlock[] } };
  stopReason: string;
  usage: ConverseUsage;
  metrics?: { latencyMs: number };
}
