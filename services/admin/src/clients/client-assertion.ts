import { createPrivateKey, randomUUID, type JsonWebKey, type KeyObject } from 'node:crypto';
import { SignJWT } from 'jose';

/** The JWS algorithm of a key: ES256/384/512 by curve, EdDSA, else RS256. */
function algorithmOf(key: KeyObject): string {
  if (key.asymmetricKeyType === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    if (curve === 'secp384r1') return 'ES384';
    if (curve === 'secp521r1') return 'ES512';
    return 'ES256';
  }
  if (key.asymmetricKeyType === 'ed25519') return 'EdDSA';
  return 'RS256';
}

/**
 * A client assertion for private_key_jwt (RFC 7523, OIDC Core 9): issued by and about the
 * client, for the token endpoint, valid for one minute, with a unique `jti`.
 */
export function clientAssertion(
  privateJwk: Record<string, unknown>,
  kid: string | undefined,
  clientId: string,
  tokenEndpoint: string,
  now = Date.now(),
): Promise<string> {
  const key = createPrivateKey({ key: privateJwk as JsonWebKey, format: 'jwk' });
  const seconds = Math.floor(now / 1000);
  return new SignJWT({ jti: randomUUID() })
    .setProtectedHeader({ alg: algorithmOf(key), typ: 'JWT', ...(kid ? { kid } : {}) })
    .setIssuer(clientId)
    .setSubject(clientId)
    .setAudience(tokenEndpoint)
    .setIssuedAt(seconds)
    .setExpirationTime(seconds + 60)
    .sign(key);
}
