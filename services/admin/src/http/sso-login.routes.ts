import type { Request } from 'express';
import { z } from 'zod';
import { ScopedRouter, SESSION_COOKIE } from '@switchyard/platform';
import type { SsoLoginService } from '../domain/sso-login.service.ts';
import { ssoClientId } from './schemas.ts';

/** Only a path on this origin: no scheme, no host, no `//` or `/\` that browsers read as one. */
const samePath = z
  .string()
  .max(2048)
  .refine((value) => {
    // eslint-disable-next-line no-control-regex
    if (!value.startsWith('/') || value.startsWith('//') || /[\\\x00-\x1f\x7f]/.test(value)) return false;
    try {
      return new URL(value, 'http://origin.invalid').host === 'origin.invalid';
    } catch {
      return false;
    }
  }, 'a relative path on this origin, such as /dashboard');

const loginQuery = z.object({
  email: z.email().max(320),
  sso_client_id: ssoClientId.optional(),
  redirect_to: samePath.default('/'),
});

const callbackQuery = z.object({
  state: z.string().min(1).max(512),
  code: z.string().min(1).max(4096).optional(),
  error: z.string().max(256).optional(),
  error_description: z.string().max(1024).optional(),
});

/**
 * `/v1/auth/sso`: the SSO login, public (the person has no credential yet). `login` sends the
 * browser to the organisation's identity provider; `callback` comes back from it and ends in
 * the `sy_session` cookie and a redirect to the page the login started from.
 */
export function ssoLoginRouter(
  logins: SsoLoginService,
  options: { callbackUrl: string | undefined },
): ScopedRouter {
  const callbackUrl = (req: Request) =>
    options.callbackUrl ?? `${req.protocol}://${req.get('host') ?? 'localhost'}/v1/auth/sso/callback`;
  const router = new ScopedRouter();
  router.get(
    '/login',
    {
      scope: 'public',
      summary:
        "Starts an SSO login: redirects the browser to the identity provider of the email's organisation.",
      query: loginQuery,
      status: 302,
    },
    async (req, res, _next, input) => {
      const query = input.query(req);
      const location = await logins.start({
        email: query.email,
        ssoClientId: query.sso_client_id,
        redirectTo: query.redirect_to,
        callbackUrl: callbackUrl(req),
      });
      res.set('cache-control', 'no-store').redirect(302, location);
    },
  );
  router.get(
    '/callback',
    {
      scope: 'public',
      summary:
        'Ends an SSO login, back from the identity provider: sets the sy_session cookie and redirects to where the login started.',
      query: callbackQuery,
      status: 302,
    },
    async (req, res, _next, input) => {
      const query = input.query(req);
      const session = await logins.complete({
        state: query.state,
        code: query.code,
        error: query.error,
        errorDescription: query.error_description,
        userAgent: req.get('user-agent'),
        clientIp: req.ip,
      });
      // The same cookie POST /v1/auth/sessions sets.
      res.cookie(SESSION_COOKIE, session.token, {
        httpOnly: true,
        sameSite: 'lax',
        secure: req.secure,
        path: '/',
        maxAge: Math.max(0, session.expiresAt.getTime() - Date.now()),
      });
      res.set('cache-control', 'no-store').redirect(302, session.redirectTo);
    },
  );
  return router;
}
