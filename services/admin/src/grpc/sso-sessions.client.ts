import type { ServiceClient } from '@switchyard/runtime';
import type { identity } from '@switchyard/proto';
import type { OpenSsoSession } from '../domain/sso-login.service.ts';

/** Sessions opened by control-plane over gRPC. */
export function remoteSsoSessions(
  client: Pick<ServiceClient<typeof identity.SsoSessionService>, 'openSsoSession'>,
): OpenSsoSession {
  return async (request) => {
    const answer = await client.openSsoSession({
      organisationId: request.organisationId,
      email: request.email,
      firstName: request.firstName ?? '',
      lastName: request.lastName ?? '',
      autoProvision: request.autoProvision,
      userAgent: request.userAgent ?? '',
      clientIp: request.clientIp ?? '',
    });
    return { token: answer.token, expiresAt: new Date(Number(answer.expiresAtMs)) };
  };
}
