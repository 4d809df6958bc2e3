/**
 * What an SSO login needs of the organisation's identity provider: the OpenID Connect relying
 * party (clients/oidc-client.ts) implements it; the login service receives it injected.
 */

/** The endpoints of an identity provider, from its discovery document. */
export interface IdpEndpoints {
  issuer: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  jwksUri: string;
}

/** How the client authenticates at the token endpoint. */
export type TokenEndpointAuth =
  | { method: 'client_secret_basic' | 'client_secret_post'; clientSecret: string }
  | { method: 'private_key_jwt'; privateJwk: Record<string, unknown>; kid: string | undefined }
  | { method: 'none' };

/** The claims of a checked id_token that a login uses. */
export interface IdTokenClaims {
  sub: string;
  email: string;
  emailVerified: boolean | undefined;
  givenName: string | undefined;
  familyName: string | undefined;
}

/** Why an id_token was refused; shown to the person signing in. */
export class IdTokenRejected extends Error {}

/** An authorization code to exchange at the token endpoint, with its PKCE verifier. */
export interface CodeExchange {
  clientId: string;
  auth: TokenEndpointAuth;
  code: string;
  codeVerifier: string;
  redirectUri: string;
}

export interface OidcProvider {
  /** The issuer's endpoints, from its discovery document. */
  discover(issuer: string): Promise<IdpEndpoints>;
  /** Exchanges an authorization code (with its PKCE verifier) for the id_token. */
  exchangeCode(endpoints: IdpEndpoints, request: CodeExchange): Promise<string>;
  /** Checks an id_token against the provider's signing keys; an unacceptable one is an IdTokenRejected. */
  verifyIdToken(
    endpoints: IdpEndpoints,
    idToken: string,
    expected: { issuer: string; clientId: string; nonce: string },
  ): Promise<IdTokenClaims>;
}
