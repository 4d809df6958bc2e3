import { BadRequest, parseInput } from '@switchyard/core';
import type { ChatBody } from '../providers/types.ts';
import { chatCompletionRequest } from './chat-request.schema.ts';
import { parseJsonObject } from './request-body.ts';

/**
 * The client's bytes as the JSON object a chat completion request is; the route validates it
 * with the schema it declares (chatCompletionRequest). `text` is the bytes already decoded
 * (UTF-8), when the caller has them.
 */
export function chatBodyJson(raw: unknown, text?: string): Record<string, unknown> {
  if (!Buffer.isBuffer(raw) || raw.length === 0) {
    throw new BadRequest('Request body must be a JSON object.', { code: 'invalid_json' });
  }
  return parseJsonObject(raw, text);
}

/** A body checked as the chat completion route checks the client's: with the schema it declares. */
export function validChatBody(body: Record<string, unknown>): ChatBody {
  return parseInput(chatCompletionRequest, body);
}
