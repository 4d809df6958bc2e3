import type { MigrationInterface, QueryRunner } from 'typeorm';

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
    for (const scope of SECRET_REFERENCE_SCOPES) {
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
      [SECRET_REFERENCE_SCOPES],
    );
  }
}
