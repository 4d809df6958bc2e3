import { BadRequest } from '@switchyard/core';
import { domainCovers } from './email-domains.ts';

/** What the choice needs of a connection. */
export interface LoginConnection {
  clientId: string;
  enabled: boolean;
}

export interface LoginEmailDomain {
  domain: string;
  allowSubdomains: boolean;
}

export interface SsoLogin {
  email: string;
  /** Chooses the connection when the organisation has several. */
  sso_client_id?: string | undefined;
}

/**
 * The connection an SSO login of the organisation goes through.
 *
 * - With `sso_client_id`: the connection of that client_id; an unknown or disabled one is a
 *   400 naming `sso_client_id`.
 * - Without it: the email's domain must be one the organisation claims (or under a claim
 *   with `allow_subdomains`), else a 400 naming `email`; then the organisation's one enabled
 *   connection. None enabled is a 400; several are a 400 naming `sso_client_id`, which must
 *   then choose.
 */
export function chooseSsoConnection<C extends LoginConnection>(
  connections: readonly C[],
  login: SsoLogin,
  emailDomains: readonly LoginEmailDomain[],
): C {
  if (login.sso_client_id !== undefined) {
    const chosen = connections.find((c) => c.clientId === login.sso_client_id);
    if (!chosen)
      throw new BadRequest(`Unknown sso_client_id '${login.sso_client_id}'.`, {
        param: 'sso_client_id',
        code: 'unknown_sso_client_id',
      });
    if (!chosen.enabled)
      throw new BadRequest(`The SSO connection '${login.sso_client_id}' is disabled.`, {
        param: 'sso_client_id',
        code: 'sso_connection_disabled',
      });
    return chosen;
  }
  const at = login.email.lastIndexOf('@');
  const domain = at > 0 ? login.email.slice(at + 1).toLowerCase() : '';
  if (!domain || !emailDomains.some((claim) => domainCovers(claim, domain))) {
    throw new BadRequest('The email is not of a domain this organisation signs in with SSO.', {
      param: 'email',
      code: 'email_domain_not_claimed',
    });
  }
  const enabled = connections.filter((c) => c.enabled);
  if (enabled.length === 0)
    throw new BadRequest('The organisation has no enabled SSO connection.', {
      code: 'sso_not_configured',
    });
  if (enabled.length > 1)
    throw new BadRequest('The organisation has several SSO connections: choose one with sso_client_id.', {
      param: 'sso_client_id',
      code: 'sso_client_id_required',
    });
  return enabled[0]!;
}
