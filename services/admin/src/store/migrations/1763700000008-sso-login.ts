import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * SSO logins: the private key a private_key_jwt connection signs its client assertions with
 * (encrypted), and the one-time state of each login between the redirect to the identity
 * provider and its callback (the state only as its SHA-256, the PKCE verifier encrypted).
 */
export class SsoLogin1763700000008 implements MigrationInterface {
  name = 'SsoLogin1763700000008';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE admin.sso_connections ADD COLUMN encrypted_private_key text`);
    await q.query(`
      CREATE TABLE admin.sso_login_states (
        state_hash text PRIMARY KEY,
        organisation_id uuid NOT NULL,
        client_id text NOT NULL,
        nonce text NOT NULL,
        encrypted_code_verifier text NOT NULL,
        redirect_uri text NOT NULL,
        redirect_to text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX sso_login_states_expires_at ON admin.sso_login_states (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE admin.sso_login_states`);
    await q.query(`ALTER TABLE admin.sso_connections DROP COLUMN encrypted_private_key`);
  }
}
