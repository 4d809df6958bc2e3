import type { Dispatcher } from 'undici';
import { openAiProvider } from '../openai/chat-complete.ts';
import type { ChatProvider } from '../types.ts';
import { PROVIDER, azureEndpoint } from './api.ts';

/**
 * Azure OpenAI speaks OpenAI's wire format at a deployment URL with an `api-key` header: the
 * body, streams and errors (a prompt blocked by the content filter is a 400 with
 * `code: content_filter`) pass through as the OpenAI adapter forwards them.
 */
export function azureOpenAiProvider(dispatcher: Dispatcher): ChatProvider {
  return openAiProvider(dispatcher, PROVIDER, azureEndpoint);
}
