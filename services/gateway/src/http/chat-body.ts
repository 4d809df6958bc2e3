import { BadRequest } from '@switchyard/platform';
import type { ChatBody } from '../providers/types.ts';

/**
 * The checks every chat request must pass before it is routed. The full request schema is
 * enforced on top of these; these keep routing itself safe.
 */
export function parseChatBody(raw: unknown): ChatBody {
  if (!Buffer.isBuffer(raw) || raw.length === 0) {
    throw new BadRequest('Request body must be a JSON object.', { code: 'invalid_json' });
  }
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch (err) {
    throw new BadRequest(`Request body is not valid JSON: ${(err as Error).message}`, {
      code: 'invalid_json',
    });
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw new BadRequest('Request body must be a JSON object.', { code: 'invalid_json' });
  }
  const { model, messages, stream } = body as Record<string, unknown>;
  if (typeof model !== 'string' || model.length === 0) {
    throw new BadRequest("Invalid body parameter 'model': expected a non-empty string.", { param: 'model' });
  }
  if (!Array.isArray(messages) || messages.length === 0) {
    throw new BadRequest("Invalid body parameter 'messages': expected an array of at least 1 item.", {
      param: 'messages',
    });
  }
  if (stream !== undefined && stream !== null && typeof stream !== 'boolean') {
    throw new BadRequest("Invalid body parameter 'stream': expected a boolean.", { param: 'stream' });
  }
  return body as ChatBody;
}
