import type { MigrationInterface, QueryRunner } from 'typeorm';

const POLICY_SCOPES = ['rate_limits', 'usage_limits'].flatMap((resource) =>
  ['create', 'read', 'list', 'update', 'delete'].map((action) => `${resource}.${action}`),
);

/**
 * The rate-limit and usage-limit scopes join the workspace scopes. A key gets those of them
 * that match what it may do with saved configs, the workspace's other routing controls: an
 * organisation admin key that can read the organisation's settings gets them all (as with the
 * audit, SSO and SCIM scopes); any other key gets `<policy>.<action>` for each
 * `configs.<action>` it holds, so a workspace key that manages configs manages limits, and one
 * that only reads configs (a member's user key) only reads limits.
 */
export class PolicyScopes1763700000023 implements MigrationInterface {
  name = 'PolicyScopes1763700000023';

  async up(q: QueryRunner): Promise<void> {
    for (const scope of POLICY_SCOPES) {
      const action = scope.slice(scope.indexOf('.') + 1);
      await q.query(
        `UPDATE control_plane.api_keys
            SET scopes = scopes || jsonb_build_array($1::text)
          WHERE NOT scopes @> jsonb_build_array($1::text)
            AND (
              (kind = 'organisation_admin' AND scopes @> '["organisation_settings.read"]'::jsonb)
              OR (kind <> 'organisation_admin' AND scopes @> jsonb_build_array('configs.' || $2::text))
            )`,
        [scope, action],
      );
    }
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`UPDATE control_plane.api_keys SET scopes = scopes - $1::text[]`, [POLICY_SCOPES]);
  }
}
