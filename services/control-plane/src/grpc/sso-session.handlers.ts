import { z } from 'zod';
import { parseInput } from '@switchyard/core';
import type { ServiceHandlers } from '@switchyard/runtime';
import type { identity } from '@switchyard/proto';
import type { SsoSessionService } from '../domain/sso-session.service.ts';

/** Only admin, which runs SSO logins, opens SSO sessions. */
export const ssoSessionCallers = { openSsoSession: ['admin'] } as const;

const openRequest = z.object({
  organisationId: z.uuid(),
  email: z.email().max(320),
  firstName: z.string().max(256),
  lastName: z.string().max(256),
  autoProvision: z.boolean(),
  userAgent: z.string().max(2048),
  clientIp: z.string().max(64),
});

export function ssoSessionHandlers(
  sessions: SsoSessionService,
): ServiceHandlers<typeof identity.SsoSessionService> {
  return {
    openSsoSession: async (request) => {
      const input = parseInput(openRequest, request, 'request');
      const session = await sessions.open(
        {
          organisationId: input.organisationId,
          email: input.email,
          firstName: input.firstName || undefined,
          lastName: input.lastName || undefined,
          autoProvision: input.autoProvision,
        },
        { userAgent: input.userAgent || undefined, clientIp: input.clientIp || undefined },
      );
      return {
        token: session.token,
        expiresAtMs: String(session.expiresAt.getTime()),
        userId: session.userId,
        provisioned: session.provisioned,
      };
    },
  };
}
