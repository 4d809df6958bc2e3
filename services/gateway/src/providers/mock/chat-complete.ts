import { createHash } from 'node:crypto';
import type { ChatCall, ChatProvider, ProviderResponse } from '../types.ts';

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part) =>
        part && typeof part === 'object' && 'text' in part ? String((part as { text: unknown }).text) : '',
      )
      .join(' ');
  }
  return '';
}

function words(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

/**
 * A deterministic provider that needs no account: the same request always gets the same
 * answer, which echoes the last user message. Lets a first request work out of the box.
 */
export function mockProvider(): ChatProvider {
  return {
    id: 'mock',
    async chatCompletions(call: ChatCall): Promise<ProviderResponse> {
      const messages = call.body.messages as Array<{ role?: string; content?: unknown }>;
      const lastUser = [...messages].reverse().find((m) => m?.role === 'user');
      const prompt = textOf(lastUser?.content).slice(0, 200);
      const content = `Mock response to: ${prompt}`;
      const digest = createHash('sha256')
        .update(JSON.stringify(call.body.messages))
        .digest('hex')
        .slice(0, 24);
      const id = `chatcmpl-mock-${digest}`;
      const created = 1_700_000_000;
      const promptTokens = messages.reduce((n, m) => n + words(textOf(m?.content)), 0);
      const usage = {
        prompt_tokens: promptTokens,
        completion_tokens: words(content),
        total_tokens: promptTokens + words(content),
      };
      if (!call.body.stream) {
        const body = {
          id,
          object: 'chat.completion',
          created,
          model: call.body.model,
          choices: [
            { index: 0, message: { role: 'assistant', content }, logprobs: null, finish_reason: 'stop' },
          ],
          usage,
          system_fingerprint: 'mock',
        };
        return {
          kind: 'json',
          status: 200,
          body: Buffer.from(JSON.stringify(body)),
          contentType: 'application/json',
        };
      }
      const includeUsage =
        (call.body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
      const base = {
        id,
        object: 'chat.completion.chunk',
        created,
        model: call.body.model,
        system_fingerprint: 'mock',
      };
      const pieces = content.split(/(?<=\s)/);
      async function* chunks(): AsyncGenerator<Uint8Array> {
        const encode = (value: unknown) => Buffer.from(`data: ${JSON.stringify(value)}\n\n`);
        yield encode({
          ...base,
          choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
        });
        for (const piece of pieces) {
          yield encode({ ...base, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] });
        }
        yield encode({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
        if (includeUsage) yield encode({ ...base, choices: [], usage });
        yield Buffer.from('data: [DONE]\n\n');
      }
      return { kind: 'stream', status: 200, body: chunks(), contentType: 'text/event-stream' };
    },
  };
}
