import type { RequestHandler } from 'express';
import { z } from 'zod';
import type { ScopedRouter } from '@switchyard/runtime';
import type { ResponsesRoute } from './responses.ts';
import { responsesRequest } from './responses-request.schema.ts';

const responseId = z.object({ response_id: z.string().regex(/^[\w.:-]{1,256}$/) });

/**
 * The Responses API's routes, ahead of the forwarded operations: answered through chat
 * completions for providers without that API, forwarded as they came to those with it.
 */
export function responsesRoutes(
  router: ScopedRouter,
  responses: ResponsesRoute,
  rawBody: RequestHandler,
): void {
  router.post(
    '/v1/responses',
    {
      scope: 'completions.write',
      summary: 'Creates a model response (the Responses API) at the provider the request routes to.',
      description:
        'Routed as a chat completion is. To providers with a Responses API of their own (the OpenAI format) it is forwarded as it came; for any other it is translated into a chat completion, with policies, guardrails and the cache applying as to one, and answered in the Responses format, streamed event by event with `stream: true`. Translated, only function tools are available, and `previous_response_id` names responses the gateway keeps for the workspace.',
      query: 'none',
      body: responsesRequest,
      streams: true,
    },
    rawBody,
    (req, res, _next, input) => responses.create(req, res, input.body),
  );
  router.get(
    '/v1/responses/:response_id',
    {
      scope: 'completions.write',
      summary: 'A model response: one the gateway translated and keeps, or else as the provider answers.',
      query: 'none',
      params: responseId,
    },
    (req, res, _next, input) => responses.retrieve(req, res, input.param(req, 'response_id')),
  );
  router.delete(
    '/v1/responses/:response_id',
    {
      scope: 'completions.write',
      summary: 'Deletes a model response: one the gateway translated and keeps, or else at the provider.',
      query: 'none',
      params: responseId,
      body: 'none',
    },
    (req, res, _next, input) => responses.delete(req, res, input.param(req, 'response_id')),
  );
}
