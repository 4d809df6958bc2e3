import express, { Router } from 'express';
import { apiKeyAuthentication, type ApiKeyCache } from '@switchyard/platform';
import type { ChatCompletions } from '../domain/chat-completions.ts';
import { FORWARDED_PATH, type ForwardedOperations } from '../domain/forwarded-operations.ts';
import { hasJsonContentType, leanBody } from './request-body.ts';

export function gatewayRouter(
  chat: ChatCompletions,
  forwarded: ForwardedOperations,
  keys: ApiKeyCache,
  headerPrefix: string,
  maxBody: string,
): Router {
  const router = Router();
  const rawBody = leanBody(maxBody, express.raw({ type: () => true, limit: maxBody }));
  // JSON bodies are read (to route by model); anything else, e.g. a file upload, streams through.
  const jsonBody = leanBody(
    maxBody,
    express.raw({ type: ['application/json', 'application/*+json'], limit: maxBody }),
    hasJsonContentType,
  );
  router.use('/v1', apiKeyAuthentication({ cache: keys, headerPrefix }));
  router.post('/v1/chat/completions', rawBody, (req, res) => chat.handle(req, res));
  router.all(FORWARDED_PATH, jsonBody, (req, res) => forwarded.handle(req, res));
  return router;
}
