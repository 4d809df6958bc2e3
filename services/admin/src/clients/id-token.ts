import type { KeyObject } from 'node:crypto';
import { compactVerify } from 'jose';
import { IdTokenRejected, type IdTokenClaims } from '../domain/oidc-provider.ts';

/** Asymmetric JWS algorithms only: an identity provider signs with a key it publishes. */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

function decodePart(part: string): Record<string, unknown> {
  const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new Error('not an object');
  return value as Record<string, unknown>;
}

/**
 * Checks an id_token (OIDC Core 3.1.3.7): an asymmetric signature by a key of the identity
 * provider, `iss` its issuer, `aud` holding the client (and `azp` the client when there are
 * several audiences), not expired, and the `nonce` of this login. `keyOf` finds the key the
 * header names.
 */
export async function verifyIdToken(
  token: string,
  expected: { issuer: string; clientId: string; nonce: string; clockToleranceSeconds?: number; now?: number },
  keyOf: (kid: string | undefined) => Promise<KeyObject | undefined>,
): Promise<IdTokenClaims> {
  const parts = token.split('.');
  if (parts.length !== 3 || token.length > 16_384) throw new IdTokenRejected('The id_token is not a JWS.');
  let header: Record<string, unknown>;
  let claims: Record<string, unknown>;
  try {
    header = decodePart(parts[0]!);
    claims = decodePart(parts[1]!);
  } catch {
    throw new IdTokenRejected('The id_token is not a JWS.');
  }
  if (typeof header.alg !== 'string' || !ALGORITHMS.includes(header.alg))
    throw new IdTokenRejected(`The id_token's algorithm ${String(header.alg)} is not accepted.`);
  const key = await keyOf(typeof header.kid === 'string' ? header.kid : undefined);
  if (!key)
    throw new IdTokenRejected('The id_token is signed with a key the identity provider does not publish.');
  let valid = false;
  try {
    await compactVerify(token, key, { algorithms: ALGORITHMS });
    valid = true;
  } catch {
    // A bad signature, or a key that does not fit the algorithm the token names.
  }
  if (!valid) throw new IdTokenRejected("The id_token's signature does not verify.");

  const now = Math.floor((expected.now ?? Date.now()) / 1000);
  const tolerance = expected.clockToleranceSeconds ?? 60;
  if (claims.iss !== expected.issuer)
    throw new IdTokenRejected("The id_token's issuer is not the connection's.");
  const audiences =
    typeof claims.aud === 'string' ? [claims.aud] : Array.isArray(claims.aud) ? claims.aud : [];
  if (!audiences.includes(expected.clientId))
    throw new IdTokenRejected('The id_token is not for this client.');
  if (audiences.length > 1 && claims.azp !== expected.clientId)
    throw new IdTokenRejected('The id_token is not for this client.');
  if (typeof claims.exp !== 'number' || claims.exp + tolerance <= now)
    throw new IdTokenRejected('The id_token has expired.');
  if (typeof claims.iat === 'number' && claims.iat - tolerance > now)
    throw new IdTokenRejected('The id_token is issued in the future.');
  if (claims.nonce !== expected.nonce) throw new IdTokenRejected("The id_token's nonce is not this login's.");
  if (typeof claims.sub !== 'string' || claims.sub.length === 0)
    throw new IdTokenRejected('The id_token has no subject.');
  if (typeof claims.email !== 'string' || claims.email.length === 0)
    throw new IdTokenRejected('The id_token has no email: the connection must ask for the email scope.');
  const text = (value: unknown) => (typeof value === 'string' && value.length > 0 ? value : undefined);
  return {
    sub: claims.sub,
    email: claims.email,
    emailVerified: typeof claims.email_verified === 'boolean' ? claims.email_verified : undefined,
    givenName: text(claims.given_name),
    familyName: text(claims.family_name),
  };
}
