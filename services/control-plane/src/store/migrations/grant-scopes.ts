import type { QueryRunner } from 'typeorm';

/**
 * New organisation scopes reach the organisation admin keys that already hold `holding`: each
 * such key gets those of `scopes` it does not hold yet. What a migration that adds scopes runs.
 */
export async function grantScopes(q: QueryRunner, scopes: readonly string[], holding: string): Promise<void> {
  for (const scope of scopes) {
    await q.query(
      `UPDATE control_plane.api_keys
          SET scopes = scopes || jsonb_build_array($1::text)
        WHERE kind = 'organisation_admin'
          AND scopes @> jsonb_build_array($2::text)
          AND NOT scopes @> jsonb_build_array($1::text)`,
      [scope, holding],
    );
  }
}

/** Takes the scopes back from every organisation admin key (a migration's `down`). */
export async function revokeScopes(q: QueryRunner, scopes: readonly string[]): Promise<void> {
  await q.query(
    `UPDATE control_plane.api_keys
        SET scopes = scopes - $1::text[]
      WHERE kind = 'organisation_admin'`,
    [scopes],
  );
}
