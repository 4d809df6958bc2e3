import type { MigrationInterface, QueryRunner } from 'typeorm';

const DEPLOYMENT_SCOPES = [
  'deployments.create',
  'deployments.read',
  'deployments.list',
  'deployments.update',
  'deployments.delete',
];

/**
 * The deployment scopes join the organisation scopes. Organisation admin keys that can read
 * the organisation's integrations may manage its deployments too: each such key gets the new
 * scopes it does not hold yet.
 */
export class DeploymentScopes1763700000030 implements MigrationInterface {
  name = 'DeploymentScopes1763700000030';

  async up(q: QueryRunner): Promise<void> {
    for (const scope of DEPLOYMENT_SCOPES) {
      await q.query(
        `UPDATE control_plane.api_keys
            SET scopes = scopes || jsonb_build_array($1::text)
          WHERE kind = 'organisation_admin'
            AND scopes @> '["integrations.read"]'::jsonb
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
      [DEPLOYMENT_SCOPES],
    );
  }
}
