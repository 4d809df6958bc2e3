import type { RequestHandler } from 'express';
import { labelRoute } from '@switchyard/core';
import { FORWARDED_PREFIXES, SPECIFIED_OPERATIONS } from './forwarded-routes.ts';

/** The chat completions route, counted under its own path. */
export const CHAT_COMPLETIONS_ROUTE = '/v1/chat/completions';

/** The gateway's own routes beside the forwarded families, each counted under its own path. */
const OWN_ROUTES = new Set([CHAT_COMPLETIONS_ROUTE, '/v1/messages']);

/** A saved prompt's completions and render, counted under their templates. */
const PROMPT_ROUTE = /^\/v1\/prompts\/[^/]+\/(completions|render)$/;

/** Each forwarded family's own path, and the template of any deeper path under it. */
const FAMILY_TEMPLATES = new Map<string, { root: string; deeper: string }>(
  FORWARDED_PREFIXES.map((family) => [family, { root: `/v1/${family}`, deeper: `/v1/${family}/*` }]),
);

/** The specified operations (their method, and their path as a pattern), with their template. */
const SPECIFIED_TEMPLATES = SPECIFIED_OPERATIONS.map((operation) => ({
  method: operation.method as string,
  pattern: new RegExp(`^${operation.path.replace(/:\w+/g, '[^/]+')}$`),
  template: operation.path as string,
}));

/**
 * The route template a data-plane request is counted under in the metrics, from a fixed set:
 * chat completions or messages, a specified forwarded operation's template (`/v1/files/:file_id/content`),
 * a forwarded family's own path (`/v1/files`), or `/v1/<family>/*` for any deeper path of the
 * family. Undefined for a path of no data-plane route. `path` has no query.
 */
export function dataPlaneRouteTemplate(method: string, path: string): string | undefined {
  if (OWN_ROUTES.has(path)) return path;
  const prompt = PROMPT_ROUTE.exec(path);
  if (prompt) return `/v1/prompts/:promptId/${prompt[1]}`;
  if (!path.startsWith('/v1/')) return undefined;
  const end = path.indexOf('/', 4);
  const family = FAMILY_TEMPLATES.get(end === -1 ? path.slice(4) : path.slice(4, end));
  if (!family) return undefined;
  if (end === -1) return family.root;
  for (const operation of SPECIFIED_TEMPLATES) {
    if (operation.method === method && operation.pattern.test(path)) return operation.template;
  }
  return family.deeper;
}

/**
 * Names the route template of every data-plane request before authentication runs, so that
 * a refused request (401, 403) is counted under its route too, not as `unmatched`.
 */
export const labelDataPlaneRoute: RequestHandler = (req, res, next) => {
  const url = req.originalUrl;
  const query = url.indexOf('?');
  const template = dataPlaneRouteTemplate(req.method, query === -1 ? url : url.slice(0, query));
  if (template !== undefined) labelRoute(res, template);
  next();
};
