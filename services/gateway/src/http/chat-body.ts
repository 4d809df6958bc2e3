import { BadRequest, parseInput } from '@switchyard/platform';
import type { ChatBody } from '../providers/types.ts';
import { chatCompletionRequest } from './chat-request.schema.ts';

/**
 * The client's bytes as a chat completion request, validated to the letter of the interface.
 * `text` is the bytes already decoded (UTF-8), when the caller has them.
 */
export function parseChatBody(raw: unknown, text?: string): ChatBody {
  if (!Buffer.isBuffer(raw) || raw.length === 0) {
    throw new BadRequest('Request body must be a JSON object.', { code: 'invalid_json' });
  }
  let body: unknown;
  try {
    body = JSON.parse(text ?? raw.toString('utf8'));
  } catch (err) {
    throw new BadRequest(`Request body is not valid JSON: ${(err as Error).message}`, {
      code: 'invalid_json',
    });
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw new BadRequest('Request body must be a JSON object.', { code: 'invalid_json' });
  }
  return parseInput(chatCompletionRequest, body);
}
