import { createPrivateKey, createPublicKey, type JsonWebKey } from 'node:crypto';

/** Members that name a public key, by key type. */
const PUBLIC_MEMBERS: Record<string, readonly string[]> = {
  RSA: ['n', 'e'],
  EC: ['crv', 'x', 'y'],
  OKP: ['crv', 'x'],
};

function samePublicKey(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const members = typeof a.kty === 'string' ? PUBLIC_MEMBERS[a.kty] : undefined;
  return !!members && a.kty === b.kty && members.every((m) => a[m] !== undefined && a[m] === b[m]);
}

/**
 * The entry of `jwks` whose public key is the public half of `privateJwk`, or undefined when
 * the JWK is not a usable private key or its public half is not among them.
 */
export function matchingPublicJwk(
  privateJwk: Record<string, unknown>,
  jwks: readonly Record<string, unknown>[],
): Record<string, unknown> | undefined {
  let publicJwk: Record<string, unknown>;
  try {
    const key = createPrivateKey({ key: privateJwk as JsonWebKey, format: 'jwk' });
    publicJwk = createPublicKey(key).export({ format: 'jwk' }) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  return jwks.find((candidate) => samePublicKey(publicJwk, candidate));
}
