import { Forbidden, requirePrincipal, ScopedRouter } from '@switchyard/platform';

/**
 * `/v1/auth`: who the caller is, for browser and token clients. It needs a session or a JWT;
 * an API key alone is refused (a key is a credential of a service, not of a person).
 * Sessions are not built yet, so today that means a JWT.
 */
export function authRouter(): ScopedRouter {
  const router = new ScopedRouter();
  router.get('/self', 'authenticated', (req, res) => {
    const principal = requirePrincipal(req);
    if (principal.authMethod !== 'jwt') {
      throw new Forbidden('GET /v1/auth/self needs a session or a JWT; an API key alone is not accepted.', {
        code: 'session_or_jwt_required',
      });
    }
    res.json({
      object: 'auth.self',
      auth_method: principal.authMethod,
      subject: principal.name.replace(/^jwt:/, ''),
      organisation_id: principal.organisationId,
      workspace: { id: principal.workspaceId, slug: principal.workspaceSlug },
      scopes: principal.scopes,
      expires_at: principal.expiresAt === null ? null : new Date(principal.expiresAt).toISOString(),
    });
  });
  return router;
}
