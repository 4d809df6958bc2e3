import express, { type RequestHandler } from 'express';
import { z } from 'zod';
import { ScopedRouter, serveOpenApi } from '@switchyard/runtime';
import type { ChatCompletionsRoute } from './chat-completions.ts';
import { chatCompletionRequest } from './chat-request.schema.ts';
import { FORWARDED_EXAMPLES, FORWARDED_OPERATIONS, forwardedScope } from './data-plane-scopes.ts';
import type { ForwardedOperationsRoute } from './forwarded-operations.ts';
import type { MessagesRoute } from './messages.ts';
import { messagesEnvelope } from './messages-request.schema.ts';
import { FORWARDED_PATH } from './forwarded-routes.ts';
import { hasJsonContentType, leanBody } from './request-body.ts';
import { labelDataPlaneRoute } from './route-templates.ts';
import type { ResponsesRoute } from './responses.ts';
import { responsesRoutes } from './responses-routes.ts';
import { mcpRoutes, type McpRouteOptions } from '../mcp/routes.ts';
import { promptRunRequest } from '../domain/prompt-runs.ts';
import type { PromptsRoute } from './prompts.ts';
import { chatBodyJson } from './chat-body.ts';

export function gatewayRouter(
  chat: ChatCompletionsRoute,
  messages: MessagesRoute,
  forwarded: ForwardedOperationsRoute,
  authentication: RequestHandler,
  maxBody: string,
  responses: ResponsesRoute,
  prompts: PromptsRoute,
  mcp?: Omit<McpRouteOptions, 'authentication' | 'maxBody'>,
): ScopedRouter {
  const router = new ScopedRouter();
  const rawBody = leanBody(maxBody, express.raw({ type: () => true, limit: maxBody }));
  // JSON bodies are read (to route by model); anything else, e.g. a file upload, streams through.
  const jsonBody = leanBody(
    maxBody,
    express.raw({ type: ['application/json', 'application/*+json'], limit: maxBody }),
    hasJsonContentType,
  );
  router.router.use('/v1', labelDataPlaneRoute);
  // Anthropic's clients: their x-api-key is read as the gateway key, their errors take Anthropic's shape.
  // A middleware, not a route: every route served is one declared below with its scope.
  router.router.use('/v1/messages', (req, res, next) =>
    req.method === 'POST' && req.path === '/' ? messages.prepare(req, res, next) : next(),
  );
  // The MCP gateway authenticates its callers itself, to answer refusals in MCP's terms.
  if (mcp) mcpRoutes(router, { ...mcp, authentication, maxBody });
  router.router.use('/v1', authentication);
  router.post(
    '/v1/chat/completions',
    {
      scope: 'completions.write',
      summary:
        'Creates a chat completion at the provider the request routes to, answered in the OpenAI format.',
      description:
        'Routed by the model (`@<integration>/<model>`), a saved or inline config (`x-vendor-config`) or a provider header (`x-vendor-provider`); policies, fallbacks, retries and the cache apply as the config says.',
      query: 'none',
      body: chatCompletionRequest,
      streams: true,
    },
    rawBody,
    (req, res, _next, input) => chat.handle(req, res, input.body),
  );
  router.post(
    '/v1/messages',
    {
      scope: 'completions.write',
      summary:
        'Creates a message at the provider the request routes to, in the Anthropic Messages format (for Anthropic SDKs).',
      description:
        "Routed by `@<integration>/<model>`, `x-vendor-config` or `x-vendor-provider`; policies, guardrails and the cache apply. When every target the request may route to is Anthropic, the request is passed through as it came (document blocks, `cache_control`, server tools, `anthropic-beta`) and Anthropic's answer, errors included, returned as it is; for any other provider it is translated into a chat completion request and answered as an Anthropic message or event stream. The gateway key may be sent in `x-api-key`; the gateway's own errors take Anthropic's error shape.",
      query: 'none',
      body: messagesEnvelope,
      streams: true,
    },
    rawBody,
    (req, res, _next, input) => messages.handle(req, res, input.body),
  );
  responsesRoutes(router, responses, rawBody);
  const promptId = z.object({
    promptId: z
      .string()
      .describe('The prompt’s id or slug, optionally followed by `@<version number>` or `@latest`.'),
  });
  router.post(
    '/v1/prompts/:promptId/completions',
    {
      scope: 'completions.write',
      summary:
        'Runs a saved prompt: renders it with the variables and answers it as a chat completion (streamed or not).',
      description:
        "The prompt (its default version, `@<n>` or `@latest`) is rendered with `variables`; its parameters, overridden by those at the root of the body, its model and rendered messages make a chat completion request, sent to the prompt's integration unless the request chooses a provider or config itself. Routing, limits, guardrails, the cache and the log apply as on /v1/chat/completions, and the answer is the same: a chat completion, or its chunk stream.",
      query: 'none',
      params: promptId,
      body: promptRunRequest,
      streams: true,
    },
    rawBody,
    async (req, res, _next, input) => prompts.completions(req, res, input.body(req, chatBodyJson(req.body))),
  );
  router.post(
    '/v1/prompts/:promptId/render',
    {
      scope: 'prompts.render',
      summary: 'Renders a saved prompt with the variables, without calling a model.',
      description:
        'Answers `{success: true, data}`: the chat completion request the prompt makes (model, messages, parameters), as /v1/prompts/{promptId}/completions would send it.',
      query: 'none',
      params: promptId,
      body: promptRunRequest,
    },
    rawBody,
    async (req, res, _next, input) => prompts.render(req, res, input.body(req, chatBodyJson(req.body))),
  );
  router.all(
    FORWARDED_PATH,
    forwardedScope,
    { examples: FORWARDED_EXAMPLES, operations: FORWARDED_OPERATIONS },
    jsonBody,
    (req, res) => forwarded.handle(req, res),
  );
  return serveOpenApi(router, 'gateway');
}
