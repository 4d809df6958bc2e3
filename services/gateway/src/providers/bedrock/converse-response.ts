import type { ChatCompletion, ContentBlock, FinishReason, ToolCall, Usage } from '../openai-format.ts';
import type { ConverseResponse, ConverseUsage, ReasoningContent } from './converse-types.ts';

/** The response's identity, which Converse does not carry in its body. */
export interface CompletionMeta {
  id: string;
  created: number;
  model: string;
}

const FINISH_REASONS: Record<string, FinishReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  guardrail_intervened: 'content_filter',
  content_filtered: 'content_filter',
};

/** Bedrock's stopReason as an OpenAI finish_reason; values with no equivalent (malformed_*) end as `stop`. */
export function finishReasonOf(stopReason: string | undefined): FinishReason {
  return (stopReason && FINISH_REASONS[stopReason]) || 'stop';
}

/**
 * Bedrock counts cache reads and writes apart from inputTokens, while OpenAI's cached_tokens
 * are a part of prompt_tokens: the prompt is all three.
 */
export function usageOf(usage: ConverseUsage): Usage {
  const cacheRead = usage.cacheReadInputTokens ?? 0;
  const cacheWrite = usage.cacheWriteInputTokens ?? 0;
  const promptTokens = usage.inputTokens + cacheRead + cacheWrite;
  return {
    prompt_tokens: promptTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: Math.max(usage.totalTokens, promptTokens + usage.outputTokens),
    ...(usage.cacheReadInputTokens !== undefined || cacheWrite > 0
      ? {
          prompt_tokens_details: {
            cached_tokens: cacheRead,
            ...(cacheWrite > 0 ? { cache_creation_tokens: cacheWrite } : {}),
          },
        }
      : {}),
  };
}

export function reasoningBlockOf(reasoning: ReasoningContent): ContentBlock | undefined {
  if (reasoning.redactedContent !== undefined)
    return { type: 'redacted_thinking', data: reasoning.redactedContent };
  if (!reasoning.reasoningText) return undefined;
  const { text, signature } = reasoning.reasoningText;
  return { type: 'thinking', thinking: text, ...(signature !== undefined ? { signature } : {}) };
}

/** A Converse answer as an OpenAI chat completion; reasoning is kept in order in content_blocks. */
export function fromConverseResponse(response: ConverseResponse, meta: CompletionMeta): ChatCompletion {
  const texts: string[] = [];
  const toolCalls: ToolCall[] = [];
  const blocks: ContentBlock[] = [];
  let reasoned = false;
  for (const block of response.output.message?.content ?? []) {
    if ('text' in block) {
      texts.push(block.text);
      blocks.push({ type: 'text', text: block.text });
    } else if ('toolUse' in block) {
      const { toolUseId, name, input } = block.toolUse;
      toolCalls.push({
        id: toolUseId,
        type: 'function',
        function: { name, arguments: JSON.stringify(input ?? {}) },
      });
    } else if ('reasoningContent' in block) {
      const reasoning = reasoningBlockOf(block.reasoningContent);
      if (reasoning) {
        blocks.push(reasoning);
        reasoned = true;
      }
    }
  }
  return {
    id: meta.id,
    object: 'chat.completion',
    created: meta.created,
    model: meta.model,
    choices: [
      {
        index: 0,
        finish_reason: finishReasonOf(response.stopReason),
        message: {
          role: 'assistant',
          content: texts.length ? texts.join('') : toolCalls.length ? null : '',
          ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
          ...(reasoned ? { content_blocks: blocks } : {}),
        },
        logprobs: null,
      },
    ],
    ...(response.usage ? { usage: usageOf(response.usage) } : {}),
  };
}
