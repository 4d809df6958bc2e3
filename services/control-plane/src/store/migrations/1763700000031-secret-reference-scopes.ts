import type { MigrationInterface, QueryRunner } from 'typeorm';
import { grantScopes, revokeScopes } from './grant-scopes.ts';

const SECRET_REFERENCE_SCOPES = [
  'secret_references.create',
  'secret_references.read',
  'secret_references.list',
  'secret_references.update',
  'secret_references.delete',
];

/**
 * The secret reference scopes join the organisation scopes. Organisation admin keys that can
 * read the organisation's integrations may manage the secret references integrations map their
 * credentials from: each such key gets the new scopes it does not hold yet.
 */
export class SecretReferenceScopes1763700000031 implements MigrationInterface {
  name = 'SecretReferenceScopes1763700000031';

  async up(q: QueryRunner): Promise<void> {
    await grantScopes(q, SECRET_REFERENCE_SCOPES, 'integrations.read');
  }

  async down(q: QueryRunner): Promise<void> {
    await revokeScopes(q, SECRET_REFERENCE_SCOPES);
  }
}
