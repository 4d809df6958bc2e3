import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { startFakeServer, type FakeServer } from './fake-server.ts';

export type SigningAlgorithm = 'RS256' | 'RS384' | 'ES256';

export interface SigningKey {
  kid: string;
  alg: SigningAlgorithm;
  privateKey: KeyObject;
  /** The public half as a JWK, as the JWKS publishes it. */
  jwk: Record<string, unknown>;
}

/** A fresh key pair: RSA 2048 for RS*, P-256 for ES256. */
export function signingKey(kid: string, alg: SigningAlgorithm = 'RS256'): SigningKey {
  const { privateKey, publicKey } =
    alg === 'ES256'
      ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
      : generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { kid, alg, privateKey, jwk: { ...publicKey.export({ format: 'jwk' }), kid, use: 'sig', alg } };
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A compact JWS of `claims` signed with `key`; `header` overrides header fields (e.g. a forged `alg`). */
export function signJwt(
  key: SigningKey,
  claims: Record<string, unknown>,
  header: Record<string, unknown> = {},
): string {
  const input = `${b64({ alg: key.alg, typ: 'JWT', kid: key.kid, ...header })}.${b64(claims)}`;
  const signature = sign(
    key.alg === 'RS384' ? 'sha384' : 'sha256',
    Buffer.from(input),
    key.alg === 'ES256' ? { key: key.privateKey, dsaEncoding: 'ieee-p1363' } : key.privateKey,
  );
  return `${input}.${signature.toString('base64url')}`;
}

export interface FakeIdentityProvider extends FakeServer {
  /** Where the key set is published. */
  jwksUrl: string;
  /** What it publishes; change it to rotate keys. */
  keys: SigningKey[];
}

/** A JWKS endpoint on 127.0.0.1 (`/.well-known/jwks.json`) publishing the public halves of `keys`. */
export function startFakeIdentityProvider(keys: SigningKey[]): Promise<FakeIdentityProvider> {
  return startFakeServer<FakeIdentityProvider>(async (req, res, _body, state) => {
    if (req.url !== '/.well-known/jwks.json') {
      res.writeHead(404).end();
      return;
    }
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ keys: state.keys.map((k) => k.jwk) }));
  }).then((state) => Object.assign(state, { keys, jwksUrl: `${state.url}/.well-known/jwks.json` }));
}
