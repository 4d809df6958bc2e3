import type { Request, RequestHandler } from 'express';
import { safeEqual, Unauthorized } from '@switchyard/core';
import { bearerToken, type Principal } from '@switchyard/access';
import { isServiceName, systemHttpToken, type ServiceName } from '@switchyard/runtime';

/** The header a service of this deployment names itself with when it calls with system authentication. */
export const SYSTEM_CALLER_HEADER = 'x-switchyard-caller';

/** Requests authenticated as a service of this deployment, with the service. */
const systemCallers = new WeakMap<Request, ServiceName>();

/** The service that made the request with system authentication, if one did. */
export function systemCallerOf(req: Request): ServiceName | undefined {
  return systemCallers.get(req);
}

/**
 * `authentication` for every request but one naming a calling service (SYSTEM_CALLER_HEADER):
 * that one must carry, as `Authorization: Bearer`, the service's system token derived from
 * GRPC_AUTH_TOKEN (systemHttpToken), and is refused otherwise; with GRPC_AUTH_TOKEN unset no
 * request is a system one. A system caller has no API key and no organisation: it is given a
 * principal of no organisation holding only `scopes`, so that the routes behind this (and
 * only these) let it read what those scopes allow, and systemCallerOf names it.
 */
export function systemOrCallerAuthentication(
  authentication: RequestHandler,
  authToken: string | undefined,
  scopes: readonly string[],
): RequestHandler {
  return (req, res, next) => {
    const claimed = req.headers[SYSTEM_CALLER_HEADER];
    if (claimed === undefined || req.method === 'OPTIONS') {
      authentication(req, res, next);
      return;
    }
    if (!authToken) {
      next(
        new Unauthorized('System authentication is not configured on this deployment (GRPC_AUTH_TOKEN).', {
          code: 'system_auth_unavailable',
        }),
      );
      return;
    }
    const token = bearerToken(req.headers.authorization);
    if (
      typeof claimed !== 'string' ||
      !isServiceName(claimed) ||
      token === undefined ||
      !safeEqual(token, systemHttpToken(authToken, claimed))
    ) {
      next(
        new Unauthorized(`Missing or invalid system token for the service named by ${SYSTEM_CALLER_HEADER}.`),
      );
      return;
    }
    const principal: Principal = {
      apiKeyId: '',
      organisationId: '',
      workspaceId: null,
      workspaceSlug: null,
      kind: 'organisation_admin',
      scopes: [...scopes],
      expiresAt: null,
      userId: null,
      name: `system:${claimed}`,
      organisationCreatedAt: null,
    };
    req.principal = principal;
    systemCallers.set(req, claimed);
    next();
  };
}
