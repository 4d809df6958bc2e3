import { BadRequest } from '@switchyard/core';
import type { ContentBlock } from '../providers/openai-format.ts';

// A model's reasoning on the translated Responses API: the thinking blocks chat answers carry
// (`content_blocks`, or `reasoning_content`) as `reasoning` output items, and back again.

/** A thinking block as chat answers carry it: thinking text (signed, where the provider signs it), or redacted. */
export type ReasoningBlock = Extract<ContentBlock, { type: 'thinking' | 'redacted_thinking' }>;

export interface ReasoningItem {
  id: string;
  type: 'reasoning';
  summary: Array<{ type: 'summary_text'; text: string }>;
  /** What the provider needs back to go on from this reasoning; absent when it needs nothing. */
  encrypted_content?: string;
}

/** Whether a chat answer's content block is a well-formed thinking block. */
export function isReasoningBlock(block: Record<string, unknown> | null | undefined): block is ReasoningBlock {
  if (block?.type === 'redacted_thinking') return typeof block.data === 'string';
  return (
    block?.type === 'thinking' &&
    typeof block.thinking === 'string' &&
    (block.signature === undefined || typeof block.signature === 'string')
  );
}

/**
 * What a reasoning item hands back to the provider: its thinking blocks, and the thought
 * signatures of the tool calls that follow it, by call id (Gemini signs a call, and wants the
 * signature back with it).
 */
export interface Reasoning {
  blocks: ReasoningBlock[];
  calls: Record<string, string>;
}

/** Marks encrypted content the gateway made, apart from any other provider's. */
const ENCRYPTED_TYPE = 'switchyard.reasoning.v1';

/**
 * A reasoning item: each thinking block's text a summary part; what the provider wants back
 * unchanged (signed or redacted thinking, as Anthropic does for tool use with thinking; a call's
 * thought signature) as `encrypted_content`.
 */
export function reasoningItem(id: string, reasoning: Reasoning): ReasoningItem {
  const summary = reasoning.blocks.flatMap((block) =>
    block.type === 'thinking' && block.thinking !== ''
      ? [{ type: 'summary_text' as const, text: block.thinking }]
      : [],
  );
  const item: ReasoningItem = { id, type: 'reasoning', summary };
  const encrypted = encryptedContentOf(reasoning);
  if (encrypted !== undefined) item.encrypted_content = encrypted;
  return item;
}

/** The reasoning as opaque `encrypted_content`; undefined when the provider needs none of it back. */
export function encryptedContentOf({ blocks, calls }: Reasoning): string | undefined {
  const signed = blocks.some((b) => b.type === 'redacted_thinking' || (b.signature ?? '') !== '');
  const hasCalls = Object.keys(calls).length > 0;
  if (!signed && !hasCalls) return undefined;
  const kept = signed ? blocks.map(keptBlock) : [];
  const payload = { type: ENCRYPTED_TYPE, blocks: kept, ...(hasCalls ? { calls } : {}) };
  return Buffer.from(JSON.stringify(payload)).toString('base64url');
}

/**
 * The reasoning in a reasoning input item's `encrypted_content`: nothing when it has none, or
 * when another provider made it (which no provider the gateway translates for can read).
 * Content the gateway made but that was altered is a 400.
 */
export function reasoningOfEncryptedContent(value: unknown, param: string): Reasoning {
  const none: Reasoning = { blocks: [], calls: {} };
  if (typeof value !== 'string' || value === '') return none;
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
  } catch {
    return none;
  }
  const payload = decoded as { type?: unknown; blocks?: unknown; calls?: unknown } | null;
  if (!payload || typeof payload !== 'object' || payload.type !== ENCRYPTED_TYPE) return none;
  const invalid = () =>
    new BadRequest('The encrypted_content of a reasoning item must be sent back as the gateway gave it.', {
      param,
      code: 'invalid_encrypted_content',
    });
  if (!Array.isArray(payload.blocks)) throw invalid();
  const calls = payload.calls ?? {};
  if (
    typeof calls !== 'object' ||
    Array.isArray(calls) ||
    Object.values(calls).some((v) => typeof v !== 'string')
  ) {
    throw invalid();
  }
  const blocks = payload.blocks.map((raw: unknown): ReasoningBlock => {
    const b = (raw ?? {}) as Record<string, unknown>;
    if (!isReasoningBlock(b)) throw invalid();
    return keptBlock(b);
  });
  return { blocks, calls: calls as Record<string, string> };
}

/** A block with only the fields the provider reads back (no stream `index`, no empty signature). */
function keptBlock(b: ReasoningBlock): ReasoningBlock {
  return b.type === 'redacted_thinking'
    ? { type: b.type, data: b.data }
    : { type: b.type, thinking: b.thinking, ...(b.signature ? { signature: b.signature } : {}) };
}

/** The thought signature a chat tool call carries (Gemini's, as its OpenAI-compatible endpoint has it). */
export function thoughtSignatureOf(call: Record<string, unknown>): string | undefined {
  const extra = call.extra_content as { google?: { thought_signature?: unknown } } | undefined;
  const signature = extra?.google?.thought_signature;
  return typeof signature === 'string' && signature !== '' ? signature : undefined;
}

/** A chat tool call's `extra_content` carrying a thought signature. */
export function withThoughtSignature(signature: string): {
  extra_content: { google: { thought_signature: string } };
} {
  return { extra_content: { google: { thought_signature: signature } } };
}
