import { BadRequest, parseInput } from '@switchyard/platform';
import type { ChatBody } from '../providers/types.ts';
import { chatCompletionRequest } from './chat-request.schema.ts';
import { parseJsonObject } from './request-body.ts';

/**
 * The client's bytes as a chat completion request, validated to the letter of the interface.
 * `text` is the bytes already decoded (UTF-8), when the caller has them.
 */
export function parseChatBody(raw: unknown, text?: string): ChatBody {
  if (!Buffer.isBuffer(raw) || raw.length === 0) {
    throw new BadRequest('Request body must be a JSON object.', { code: 'invalid_json' });
  }
  return parseInput(chatCompletionRequest, parseJsonObject(raw, text));
}
