import express, { type RequestHandler } from 'express';
import { ScopedRouter } from '@switchyard/platform';
import type { ChatCompletions } from '../domain/chat-completions.ts';
import { FORWARDED_PATH, type ForwardedOperations } from '../domain/forwarded-operations.ts';
import { FORWARDED_EXAMPLES, forwardedScope } from './data-plane-scopes.ts';
import { hasJsonContentType, leanBody } from './request-body.ts';

export function gatewayRouter(
  chat: ChatCompletions,
  forwarded: ForwardedOperations,
  authentication: RequestHandler,
  maxBody: string,
): ScopedRouter {
  const router = new ScopedRouter();
  const rawBody = leanBody(maxBody, express.raw({ type: () => true, limit: maxBody }));
  // JSON bodies are read (to route by model); anything else, e.g. a file upload, streams through.
  const jsonBody = leanBody(
    maxBody,
    express.raw({ type: ['application/json', 'application/*+json'], limit: maxBody }),
    hasJsonContentType,
  );
  router.router.use('/v1', authentication);
  router.post('/v1/chat/completions', 'completions.write', rawBody, (req, res) => chat.handle(req, res));
  router.all(FORWARDED_PATH, forwardedScope, FORWARDED_EXAMPLES, jsonBody, (req, res) =>
    forwarded.handle(req, res),
  );
  return router;
}
