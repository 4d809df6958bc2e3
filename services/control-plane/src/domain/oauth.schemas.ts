import { z } from 'zod';

/**
 * The wire form of an authorization request and of the user's answer (snake_case, as OAuth
 * spells them): what the authorize and consent routes accept, and the domain inputs derived
 * from them (see oauth-authorization.service.ts). Every field is checked by the service, so
 * that it can answer the one error shape for each.
 */
const optional = (max: number) => z.string().max(max).optional();

export const authorizeQuery = z.object({
  client_id: optional(256),
  redirect_uri: optional(4096),
  response_type: optional(64),
  scope: optional(4096),
  state: optional(1024),
  code_challenge: optional(256),
  code_challenge_method: optional(32),
  /** RFC 8707: the resource the tokens are for (e.g. an MCP server's URL); given at most once. */
  resource: optional(4096),
});

export const consentBody = authorizeQuery.omit({ response_type: true }).extend({ approve: z.boolean() });
