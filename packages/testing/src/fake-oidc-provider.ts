import { createHash, createPublicKey, randomBytes, verify, type JsonWebKey } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { signJwt, signingKey, type SigningKey } from './fake-identity-provider.ts';
import { startFakeServer, type FakeServer } from './fake-server.ts';

/** A client registered at the fake provider, authenticating at /token with `method`. */
export type FakeOidcClient =
  | { clientId: string; method: 'client_secret_basic' | 'client_secret_post'; clientSecret: string }
  | { clientId: string; method: 'private_key_jwt'; publicJwk: Record<string, unknown> };

export interface FakeOidcProvider extends FakeServer {
  issuer: string;
  /** Signs id_tokens with the first; /jwks publishes all. */
  keys: SigningKey[];
  clients: Map<string, FakeOidcClient>;
  /** Who signs in at /authorize (claims of the id_token). */
  user: { sub: string; email: string; given_name?: string; family_name?: string };
  /** Claims laid over the id_token's (e.g. a wrong nonce, issuer or audience, a past exp). */
  idTokenOverrides: Record<string, unknown>;
  /** When set, /authorize sends the browser back with this error instead of a code. */
  authorizeError: string | undefined;
  /** Why /token refused each refused request, in order. */
  tokenRefusals: string[];
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
};

const sha256Url = (value: string) => createHash('sha256').update(value).digest('base64url');

/** Checks a private_key_jwt client assertion (RFC 7523) with the client's public key. */
function assertionProblem(
  assertion: string,
  client: Extract<FakeOidcClient, { method: 'private_key_jwt' }>,
  tokenEndpoint: string,
): string | undefined {
  const [h, c, s] = assertion.split('.');
  if (!h || !c || !s) return 'client_assertion is not a JWS';
  const header = JSON.parse(Buffer.from(h, 'base64url').toString()) as { alg?: string };
  const claims = JSON.parse(Buffer.from(c, 'base64url').toString()) as Record<string, unknown>;
  const key = createPublicKey({ key: client.publicJwk as JsonWebKey, format: 'jwk' });
  const ec = key.asymmetricKeyType === 'ec';
  const ok = verify(
    header.alg === 'EdDSA' ? null : 'sha256',
    Buffer.from(`${h}.${c}`),
    ec ? { key, dsaEncoding: 'ieee-p1363' } : key,
    Buffer.from(s, 'base64url'),
  );
  if (!ok) return 'client_assertion signature does not verify';
  if (claims.iss !== client.clientId || claims.sub !== client.clientId) return 'client_assertion iss/sub';
  if (claims.aud !== tokenEndpoint) return 'client_assertion aud';
  if (typeof claims.exp !== 'number' || claims.exp * 1000 < Date.now()) return 'client_assertion expired';
  if (typeof claims.jti !== 'string') return 'client_assertion jti';
  return undefined;
}

/**
 * An OpenID Connect provider on 127.0.0.1: discovery, /authorize (signs `user` in at once and
 * redirects back with a code), /token (authorization code with PKCE S256 only; authenticates
 * the client by its registered method and refuses anything else), /jwks. id_tokens are
 * signed with `keys[0]`.
 */
export async function startFakeOidcProvider(clients: FakeOidcClient[] = []): Promise<FakeOidcProvider> {
  const codes = new Map<
    string,
    { clientId: string; redirectUri: string; challenge: string; nonce: string | null }
  >();
  const provider = await startFakeServer<FakeOidcProvider>(async (req, res, body, state) => {
    const url = new URL(req.url ?? '/', state.url);
    const tokenEndpoint = `${state.url}/token`;
    if (url.pathname === '/.well-known/openid-configuration') {
      return json(res, 200, {
        issuer: state.issuer,
        authorization_endpoint: `${state.url}/authorize`,
        token_endpoint: tokenEndpoint,
        jwks_uri: `${state.url}/jwks`,
        response_types_supported: ['code'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: [
          'client_secret_basic',
          'client_secret_post',
          'private_key_jwt',
        ],
      });
    }
    if (url.pathname === '/jwks') return json(res, 200, { keys: state.keys.map((k) => k.jwk) });
    if (url.pathname === '/authorize') {
      const p = url.searchParams;
      const client = state.clients.get(p.get('client_id') ?? '');
      const redirectUri = p.get('redirect_uri') ?? '';
      if (!client || !redirectUri) return json(res, 400, { error: 'invalid_request' });
      const back = new URL(redirectUri);
      if (p.get('state')) back.searchParams.set('state', p.get('state')!);
      const scopes = (p.get('scope') ?? '').split(' ');
      if (state.authorizeError) back.searchParams.set('error', state.authorizeError);
      else if (
        p.get('response_type') !== 'code' ||
        p.get('code_challenge_method') !== 'S256' ||
        !p.get('code_challenge') ||
        !scopes.includes('openid')
      ) {
        back.searchParams.set('error', 'invalid_request');
      } else {
        const code = randomBytes(16).toString('base64url');
        codes.set(code, {
          clientId: client.clientId,
          redirectUri,
          challenge: p.get('code_challenge')!,
          nonce: p.get('nonce'),
        });
        back.searchParams.set('code', code);
      }
      res.writeHead(302, { location: back.toString() }).end();
      return;
    }
    if (url.pathname === '/token' && req.method === 'POST') {
      const form = new URLSearchParams(body);
      const refuse = (status: number, error: string, why: string) => {
        state.tokenRefusals.push(why);
        json(res, status, { error, error_description: why });
      };
      const basic = /^Basic (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
      const [basicId, basicSecret] = basic
        ? Buffer.from(basic, 'base64')
            .toString()
            .split(':')
            .map((v) => decodeURIComponent(v.replace(/\+/g, ' ')))
        : [];
      const clientId = basicId ?? form.get('client_id') ?? '';
      const client = state.clients.get(clientId);
      if (!client) return refuse(401, 'invalid_client', 'unknown client');
      if (client.method === 'client_secret_basic') {
        if (basicSecret !== client.clientSecret || form.has('client_secret'))
          return refuse(401, 'invalid_client', 'client_secret_basic expected');
      } else if (client.method === 'client_secret_post') {
        if (basic || form.get('client_secret') !== client.clientSecret)
          return refuse(401, 'invalid_client', 'client_secret_post expected');
      } else {
        if (form.get('client_assertion_type') !== 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer')
          return refuse(401, 'invalid_client', 'private_key_jwt expected');
        const problem = assertionProblem(
          form.get('client_assertion') ?? '',
          client as Extract<FakeOidcClient, { method: 'private_key_jwt' }>,
          tokenEndpoint,
        );
        if (problem) return refuse(401, 'invalid_client', problem);
      }
      if (form.get('grant_type') !== 'authorization_code')
        return refuse(400, 'unsupported_grant_type', 'grant');
      const code = codes.get(form.get('code') ?? '');
      codes.delete(form.get('code') ?? '');
      if (!code || code.clientId !== clientId) return refuse(400, 'invalid_grant', 'unknown code');
      if (form.get('redirect_uri') !== code.redirectUri) return refuse(400, 'invalid_grant', 'redirect_uri');
      if (sha256Url(form.get('code_verifier') ?? '') !== code.challenge)
        return refuse(400, 'invalid_grant', 'PKCE verifier does not match');
      const now = Math.floor(Date.now() / 1000);
      const idToken = signJwt(state.keys[0]!, {
        iss: state.issuer,
        aud: clientId,
        iat: now,
        exp: now + 300,
        ...(code.nonce ? { nonce: code.nonce } : {}),
        ...state.user,
        ...state.idTokenOverrides,
      });
      return json(res, 200, {
        access_token: randomBytes(16).toString('hex'),
        token_type: 'Bearer',
        id_token: idToken,
      });
    }
    res.writeHead(404).end();
  });
  return Object.assign(provider, {
    issuer: provider.url,
    keys: [signingKey('idp-1', 'RS256')],
    clients: new Map(clients.map((c) => [c.clientId, c])),
    user: { sub: 'idp-user-1', email: 'ada@acme.test' },
    idTokenOverrides: {},
    authorizeError: undefined,
    tokenRefusals: [],
  });
}
