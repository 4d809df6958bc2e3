// The OAuth code and refresh-token exchanges against real PostgreSQL, with real concurrency:
// of many simultaneous exchanges of one code (or one refresh token) exactly one succeeds.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { DataSource } from 'typeorm';
import type { Principal } from '@switchyard/access';
import { MemoryEventBus } from '@switchyard/adapters';
import { OAuthError } from '../domain/oauth.ts';
import { OAuthAuthorizationService } from '../domain/oauth-authorization.service.ts';
import { OAuthClientService } from '../domain/oauth-client.service.ts';
import { OAuthTokenService } from '../domain/oauth-token.service.ts';
import { startContractDatabase, type ContractDatabase } from '../testing/contract-database.ts';
import { seedOrganisation, type SeededOrganisation } from '../testing/organisations.ts';
import { OAuthRepository } from './oauth.repository.ts';

const CONCURRENCY = 16;
const REDIRECT = 'https://agent.example.com/callback';

let db: ContractDatabase | undefined;
let ds: DataSource;
let oauth: {
  clients: OAuthClientService;
  authorization: OAuthAuthorizationService;
  tokens: OAuthTokenService;
};
let seeded: SeededOrganisation;

/** Runs `sql` on the maintenance database (creating and dropping this run's database). */
function consenting(): Principal {
  return {
    apiKeyId: 'contract-subject',
    organisationId: seeded.organisationId,
    workspaceId: seeded.workspaceId,
    workspaceSlug: 'default',
    kind: 'workspace_user',
    scopes: ['completions.write', 'models.read'],
    expiresAt: null,
    userId: null,
    name: 'jwt:contract-subject',
    organisationCreatedAt: null,
    authMethod: 'jwt',
  };
}

async function grantedCode(clientId: string) {
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const { redirect_to: redirectTo } = await oauth.authorization.consent(consenting(), {
    clientId,
    redirectUri: REDIRECT,
    scope: 'completions.write',
    state: 's',
    codeChallenge: challenge,
    codeChallengeMethod: 'S256',
    approve: true,
  });
  return { code: new URL(redirectTo).searchParams.get('code')!, verifier };
}

function assertOneWinner(results: PromiseSettledResult<unknown>[]): void {
  const won = results.filter((r) => r.status === 'fulfilled');
  const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  assert.equal(won.length, 1, `exactly one exchange succeeds, not ${won.length}`);
  for (const { reason } of lost) {
    assert.ok(reason instanceof OAuthError, String(reason));
    assert.equal(reason.error, 'invalid_grant');
  }
}

before(async () => {
  db = await startContractDatabase('oauth-contract', CONCURRENCY + 2);
  ds = db.ds;
  seeded = await seedOrganisation(ds.manager, 'oauth-contract');
  const repo = new OAuthRepository(ds.manager);
  const options = { prefix: 'sy-', settings: { OAUTH_ISSUER: undefined, OAUTH_REDIRECT_URI_ALLOWLIST: [] } };
  oauth = {
    clients: new OAuthClientService(repo, options),
    authorization: new OAuthAuthorizationService(repo, options),
    tokens: new OAuthTokenService(repo, new MemoryEventBus(), options),
  };
});

after(() => db?.close());

describe('OAuth exchanges on PostgreSQL', () => {
  test(`of ${CONCURRENCY} concurrent exchanges of one authorization code exactly one gets tokens`, async () => {
    const { client } = await oauth.clients.registerClient({
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
    });
    for (let round = 0; round < 5; round++) {
      const { code, verifier } = await grantedCode(client.clientId);
      const results = await Promise.allSettled(
        Array.from({ length: CONCURRENCY }, () =>
          oauth.tokens.exchangeCode(client, { code, redirectUri: REDIRECT, codeVerifier: verifier }),
        ),
      );
      assertOneWinner(results);
      const winner = results.find((r) => r.status === 'fulfilled')!.value;
      // The losers presented the code again with its verifier: the one grant it made is revoked.
      const hash = createHash('sha256').update(winner.access_token).digest('hex');
      const rows: Array<{ family: number; active: number }> = await ds.query(
        `SELECT count(DISTINCT family_id)::int AS family, count(*) FILTER (WHERE revoked_at IS NULL)::int AS active
           FROM control_plane.oauth_tokens
          WHERE family_id = (SELECT family_id FROM control_plane.oauth_tokens WHERE token_hash = $1)`,
        [hash],
      );
      assert.deepEqual(rows[0], { family: 1, active: 0 });
      const issued: Array<{ n: number }> = await ds.query(
        `SELECT count(*)::int AS n FROM control_plane.oauth_tokens t
           JOIN control_plane.oauth_authorization_codes c ON c.family_id = t.family_id
          WHERE c.code_hash = $1`,
        [createHash('sha256').update(code).digest('hex')],
      );
      assert.equal(issued[0]!.n, 2, 'one access and one refresh token were issued for the code');
    }
  });

  test(`of ${CONCURRENCY} concurrent refreshes with one refresh token exactly one rotates it`, async () => {
    const { client } = await oauth.clients.registerClient({
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
    });
    const { code, verifier } = await grantedCode(client.clientId);
    const tokens = await oauth.tokens.exchangeCode(client, {
      code,
      redirectUri: REDIRECT,
      codeVerifier: verifier,
    });
    const results = await Promise.allSettled(
      Array.from({ length: CONCURRENCY }, () =>
        oauth.tokens.refresh(client, { refreshToken: tokens.refresh_token! }),
      ),
    );
    assertOneWinner(results);
  });

  test('an expired code is refused by the database clock', async () => {
    const { client } = await oauth.clients.registerClient({ redirect_uris: [REDIRECT] });
    const { code, verifier } = await grantedCode(client.clientId);
    await ds.query(
      `UPDATE control_plane.oauth_authorization_codes SET expires_at = now() - interval '1 millisecond'
        WHERE code_hash = $1`,
      [createHash('sha256').update(code).digest('hex')],
    );
    await assert.rejects(
      oauth.tokens.exchangeCode(client, { code, redirectUri: REDIRECT, codeVerifier: verifier }),
      (err: unknown) => err instanceof OAuthError && /expired/.test(err.message),
    );
  });
});
