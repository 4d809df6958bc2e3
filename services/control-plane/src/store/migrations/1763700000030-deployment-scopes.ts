import type { MigrationInterface, QueryRunner } from 'typeorm';
import { grantScopes, revokeScopes } from './grant-scopes.ts';

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
    await grantScopes(q, DEPLOYMENT_SCOPES, 'integrations.read');
  }

  async down(q: QueryRunner): Promise<void> {
    await revokeScopes(q, DEPLOYMENT_SCOPES);
  }
}
