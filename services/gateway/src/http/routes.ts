import express, { Router } from 'express';
import { apiKeyAuthentication, type ApiKeyCache } from '@switchyard/platform';
import type { ChatCompletions } from '../domain/chat-completions.ts';

export function gatewayRouter(
  chat: ChatCompletions,
  keys: ApiKeyCache,
  headerPrefix: string,
  maxBody: string,
): Router {
  const router = Router();
  const rawBody = express.raw({ type: () => true, limit: maxBody });
  router.use('/v1', apiKeyAuthentication({ cache: keys, headerPrefix }));
  router.post('/v1/chat/completions', rawBody, (req, res) => chat.handle(req, res));
  return router;
}
