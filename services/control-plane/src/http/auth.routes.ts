import { Forbidden, requirePrincipal, ScopedRouter } from '@switchyard/platform';

/**
 * `/v1/auth`: who the caller is, for browser and token clients. It needs a session, a JWT or
 * an OAuth access token; an API key alone is refused (a key is a credential of a service, not
 * of a person). Sessions are not built yet.
 */
export function authRouter(): ScopedRouter {
  const router = new ScopedRouter();
  router.get('/self', 'authenticated', (req, res) => {
    const principal = requirePrincipal(req);
    if (principal.authMethod !== 'jwt' && principal.authMethod !== 'oauth') {
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
        principal.authMethod === 'jwt'
          ? principal.name.replace(/^jwt:/, '')
          : (principal.userId ?? principal.name),
      ...(principal.authMethod === 'oauth'
        ? { display_name: principal.name, client_id: principal.oauthClientId ?? null }
        : {}),
      organisation_id: principal.organisationId,
      workspace: { id: principal.workspaceId, slug: principal.workspaceSlug },
      scopes: principal.scopes,
      expires_at: principal.expiresAt === null ? null : new Date(principal.expiresAt).toISOString(),
    });
  });
  return router;
}
