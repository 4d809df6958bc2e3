import type { MigrationInterface, QueryRunner } from 'typeorm';

/** OIDC connections (several per organisation, one per client_id) and claimed email domains. */
export class Sso1763700000005 implements MigrationInterface {
  name = 'Sso1763700000005';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE admin.sso_connections (
        id uuid PRIMARY KEY,
        organisation_id uuid NOT NULL,
        client_id text NOT NULL,
        enabled boolean NOT NULL,
        issuer text NOT NULL,
        encrypted_client_secret text,
        token_endpoint_auth_method text NOT NULL,
        jwks jsonb,
        scopes jsonb NOT NULL,
        disable_auto_provision_user boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        updated_by text NOT NULL,
        UNIQUE (organisation_id, client_id)
      )`);
    // A domain belongs to one organisation at most.
    await q.query(`
      CREATE TABLE admin.organisation_email_domains (
        id uuid PRIMARY KEY,
        organisation_id uuid NOT NULL,
        domain text NOT NULL UNIQUE,
        allow_subdomains boolean NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        created_by text NOT NULL
      )`);
    await q.query(
      `CREATE INDEX organisation_email_domains_organisation ON admin.organisation_email_domains (organisation_id)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE admin.organisation_email_domains`);
    await q.query(`DROP TABLE admin.sso_connections`);
  }
}
