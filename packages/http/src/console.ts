import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import express, { type RequestHandler } from 'express';

/** The console's client-side pages are these paths; none is an API prefix (see files/routes.json). */
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

/**
 * Serves the console's built files from `dir`: hashed assets cached for a year, every other
 * GET or HEAD that asks for HTML answered with index.html (the app routes on the client).
 * A path no file and no page serves falls through to `next` (the one 404 of the API).
 */
export function serveConsole(dir: string): RequestHandler {
  const indexFile = join(dir, 'index.html');
  if (!existsSync(indexFile)) {
    return (req, res, next) => {
      if ((req.method === 'GET' || req.method === 'HEAD') && req.path === '/') {
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
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    assets(req, res, () => {
      if (!req.accepts('html') || req.path.includes('.')) return next();
      securityHeaders(res);
      res.set('cache-control', 'no-cache').type('html').send(index);
    });
  };
}
