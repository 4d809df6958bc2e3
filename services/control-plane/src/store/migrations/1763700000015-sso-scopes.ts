import type { MigrationInterface, QueryRunner } from 'typeorm';

const SSO_SCOPES = [
  'organisation_sso.read',
  'organisation_sso.update',
  'organisation_email_domains.list',
  'organisation_email_domains.create',
  'organisation_email_domains.delete',
];

/**
 * The SSO and email-domain scopes join the organisation scopes. Organisation admin keys that
 * can read the organisation's settings may manage its SSO too: each such key gets the new
 * scopes it does not hold yet.
 */
export class SsoScopes1763700000015 implements MigrationInterface {
  name = 'SsoScopes1763700000015';

  async up(q: QueryRunner): Promise<void> {
    for (const scope of SSO_SCOPES) {
      await q.query(
        `UPDATE control_plane.api_keys
            SET scopes = scopes || jsonb_build_array($1::text)
          WHERE kind = 'organisation_admin'
            AND scopes @> '["organisation_settings.read"]'::jsonb
            AND NOT scopes @> jsonb_build_array($1::text)`,
        [scope],
      );
    }
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `UPDATE control_plane.api_keys
          SET scopes = scopes - $1::text[]
        WHERE kind = 'organisation_admin'`,
      [SSO_SCOPES],
    );
  }
}
