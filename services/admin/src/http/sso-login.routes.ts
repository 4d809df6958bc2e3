import type { Request } from 'express';
import { camelKeys } from '@switchyard/core';
import { SESSION_COOKIE } from '@switchyard/access';
import { ScopedRouter } from '@switchyard/runtime';
import type { SsoLoginService } from '../domain/sso-login.service.ts';
import { ssoCallbackQuery, ssoLoginQuery } from '../domain/sso-login.schemas.ts';

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
      query: ssoLoginQuery,
      status: 302,
    },
    async (req, res, _next, input) => {
      const location = await logins.start({ ...camelKeys(input.query(req)), callbackUrl: callbackUrl(req) });
      res.set('cache-control', 'no-store').redirect(302, location);
    },
  );
  router.get(
    '/callback',
    {
      scope: 'public',
      summary:
        'Ends an SSO login, back from the identity provider: sets the sy_session cookie and redirects to where the login started.',
      query: ssoCallbackQuery,
      status: 302,
    },
    async (req, res, _next, input) => {
      const session = await logins.complete({
        ...camelKeys(input.query(req)),
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
