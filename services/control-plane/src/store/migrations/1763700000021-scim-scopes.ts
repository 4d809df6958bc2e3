import type { MigrationInterface, QueryRunner } from 'typeorm';

const SCIM_SCOPES = ['organisation_scim.read', 'organisation_scim.update'];

/**
 * The SCIM scopes join the organisation scopes. Organisation admin keys that can read the
 * organisation's settings may manage its SCIM provisioning too: each such key gets the new
 * scopes it does not hold yet.
 */
export class ScimScopes1763700000021 implements MigrationInterface {
  name = 'ScimScopes1763700000021';

  async up(q: QueryRunner): Promise<void> {
    for (const scope of SCIM_SCOPES) {
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
      [SCIM_SCOPES],
    );
  }
}
