import type { MigrationInterface, QueryRunner } from 'typeorm';
import { grantScopes, revokeScopes } from './grant-scopes.ts';

const SCOPES = ['integration_workspaces.read'];

/**
 * Reading which workspaces may use an organisation's integrations is an organisation scope of
 * its own: organisation admin keys that can read integrations get it.
 */
export class IntegrationWorkspaceScopes1763700000032 implements MigrationInterface {
  name = 'IntegrationWorkspaceScopes1763700000032';

  async up(q: QueryRunner): Promise<void> {
    await grantScopes(q, SCOPES, 'integrations.read');
  }

  async down(q: QueryRunner): Promise<void> {
    await revokeScopes(q, SCOPES);
  }
}
