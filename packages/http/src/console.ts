import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import express, { type RequestHandler } from 'express';

const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

function securityHeaders(res: express.Response): void {
  res.set('content-security-policy', CONTENT_SECURITY_POLICY);
  res.set('x-content-type-options', 'nosniff');
  res.set('referrer-policy', 'same-origin');
  res.set('x-frame-options', 'DENY');
}

export interface ServeConsoleOptions {
  /**
   * Whether a path belongs to the APIs (the routing table's services): such a path is never
   * answered with the app, even when a browser asks for HTML, so that an unknown API path gets
   * the API's JSON 404.
   */
  isApiPath?: (path: string) => boolean;
}

/**
 * Serves the console's built files from `dir`: hashed assets cached for a year, every other
 * GET or HEAD that asks for HTML (and is no API path, has no file extension) answered with
 * index.html (the app routes on the client). A path no file and no page serves falls through
 * to `next` (the one 404 of the API). `express.static` refuses paths that leave `dir`.
 */
export function serveConsole(dir: string, options: ServeConsoleOptions = {}): RequestHandler {
  const indexFile = join(dir, 'index.html');
  const isApiPath = options.isApiPath ?? (() => false);
  /** A request the app's index.html answers when no file does. */
  const isPageRequest = (req: express.Request) =>
    (req.method === 'GET' || req.method === 'HEAD') &&
    !req.path.includes('.') &&
    !isApiPath(req.path) &&
    Boolean(req.accepts('html'));
  if (!existsSync(indexFile)) {
    return (req, res, next) => {
      if (isPageRequest(req)) {
        res
          .status(503)
          .type('text/plain')
          .send(
            `The console is not built: ${indexFile} is missing. Run: pnpm --filter @switchyard/console build\n`,
          );
        return;
      }
      next();
    };
  }
  const index = readFileSync(indexFile);
  const assets = express.static(dir, {
    index: false,
    fallthrough: true,
    setHeaders: (res, path) => {
      securityHeaders(res as unknown as express.Response);
      res.setHeader(
        'cache-control',
        path.includes(`${join(dir, 'assets')}`) ? 'public, max-age=31536000, immutable' : 'no-cache',
      );
    },
  });
  return (req, res, next) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || isApiPath(req.path)) return next();
    assets(req, res, () => {
      if (!isPageRequest(req)) return next();
      securityHeaders(res);
      res.set('cache-control', 'no-cache').type('html').send(index);
    });
  };
}
