// Chat completion streams as adapters give them, for the tests of what translates them.

/** One server-sent event of a chat stream. */
export const sse = (value: unknown): string => `data: ${JSON.stringify(value)}\n\n`;

const head = {
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 1_700_000_000,
  model: 'claude-x-2025',
};

/** A chunk of the first choice: its delta, and its finish reason on the last. */
export const chatChunk = (delta: Record<string, unknown>, finish: string | null = null): string =>
  sse({ ...head, choices: [{ index: 0, delta, finish_reason: finish }] });

/** The chunk that closes a stream with its usage. */
export const usageChunk = (usage: Record<string, unknown>): string => sse({ ...head, choices: [], usage });
