import { Forbidden, sha256Hex } from '@switchyard/core';
import { requirePrincipal, SESSION_COOKIE, sessionCookie } from '@switchyard/access';
import { ScopedRouter } from '@switchyard/runtime';
import { SESSION_TTL_MS, type SessionService } from '../domain/session.service.ts';

/**
 * `/v1/auth`: who the caller is, for browser and token clients. It needs a session, a JWT or
 * an OAuth access token; an API key alone is refused (a key is a credential of a service, not
 * of a person).
 */
export function authRouter(sessions: SessionService): ScopedRouter {
  const router = new ScopedRouter();
  // Opens a browser session with a JWT: the answer sets an HttpOnly cookie that authenticates
  // this origin's requests (writes only with a same-origin Origin header) for up to 8 hours.
  router.post(
    '/sessions',
    {
      scope: 'authenticated',
      summary: 'Opens a browser session with a JWT: sets the HttpOnly sy_session cookie, for up to 8 hours.',
      query: 'none',
      body: 'none',
    },
    async (req, res) => {
      const { token, expiresAt } = await sessions.open(requirePrincipal(req), {
        userAgent: req.get('user-agent'),
        clientIp: req.ip,
      });
      res.cookie(SESSION_COOKIE, token, {
        httpOnly: true,
        sameSite: 'lax',
        secure: req.secure,
        path: '/',
        maxAge: Math.min(SESSION_TTL_MS, expiresAt.getTime() - Date.now()),
      });
      res.json({ object: 'auth.session', expires_at: expiresAt.toISOString() });
    },
  );
  router.delete(
    '/sessions/current',
    {
      scope: 'authenticated',
      summary: 'Closes the browser session the request came with, and clears its cookie.',
      query: 'none',
      body: 'none',
    },
    async (req, res) => {
      const token = sessionCookie(req);
      if (!token) throw new Forbidden('Only a session can be closed this way.', { code: 'session_required' });
      await sessions.close(requirePrincipal(req), sha256Hex(token));
      res.clearCookie(SESSION_COOKIE, { path: '/' });
      res.json({});
    },
  );
  router.get(
    '/self',
    {
      scope: 'authenticated',
      summary: 'Who the caller is: for a session, a JWT or an OAuth access token (not an API key alone).',
      query: 'none',
    },
    (req, res) => {
      const principal = requirePrincipal(req);
      if (!principal.authMethod) {
        throw new Forbidden(
          'GET /v1/auth/self needs a session, a JWT or an OAuth access token; an API key alone is not accepted.',
          { code: 'session_or_jwt_required' },
        );
      }
      res.json({
        object: 'auth.self',
        auth_method: principal.authMethod,
        // A JWT's subject; for an OAuth token, the user who consented (or the JWT subject that did).
        subject:
          principal.authMethod === 'jwt' || principal.authMethod === 'session'
            ? principal.name.replace(/^(jwt|session):/, '')
            : (principal.userId ?? principal.name),
        ...(principal.authMethod === 'oauth'
          ? { display_name: principal.name, client_id: principal.oauthClientId ?? null }
          : {}),
        organisation_id: principal.organisationId,
        workspace: { id: principal.workspaceId, slug: principal.workspaceSlug },
        scopes: principal.scopes,
        expires_at: principal.expiresAt === null ? null : new Date(principal.expiresAt).toISOString(),
      });
    },
  );
  router.get(
    '/key',
    {
      scope: 'authenticated',
      summary:
        'Who the calling API key is: its id, name, kind, organisation, workspace and scopes (API keys only; sessions, JWTs and OAuth tokens ask GET /v1/auth/self).',
      query: 'none',
    },
    (req, res) => {
      const principal = requirePrincipal(req);
      if (principal.authMethod) {
        throw new Forbidden(
          'GET /v1/auth/key answers for an API key; a session, a JWT or an OAuth access token asks GET /v1/auth/self.',
          { code: 'api_key_required' },
        );
      }
      res.json({
        object: 'auth.key',
        id: principal.apiKeyId,
        name: principal.name,
        type: principal.kind === 'organisation_admin' ? 'organisation' : 'workspace',
        sub_type:
          principal.kind === 'workspace_user'
            ? 'user'
            : principal.kind === 'workspace_service'
              ? 'service'
              : 'admin',
        organisation_id: principal.organisationId,
        workspace: principal.workspaceId
          ? { id: principal.workspaceId, slug: principal.workspaceSlug }
          : null,
        user_id: principal.userId,
        scopes: principal.scopes,
        expires_at: principal.expiresAt === null ? null : new Date(principal.expiresAt).toISOString(),
      });
    },
  );
  return router;
}
