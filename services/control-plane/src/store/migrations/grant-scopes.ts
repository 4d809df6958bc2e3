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

/**
 * New workspace scopes reach the keys that may do the like with saved configs: an organisation
 * admin key that can read the organisation's settings gets them all; any other key gets
 * `<resource>.<action>` for each `configs.<action>` it holds (`configAction` maps a scope's
 * action to the configs action that grants it; the same action unless it says otherwise).
 */
export async function grantWorkspaceScopes(
  q: QueryRunner,
  scopes: readonly string[],
  configAction: (action: string) => string = (action) => action,
): Promise<void> {
  for (const scope of scopes) {
    const action = scope.slice(scope.indexOf('.') + 1);
    await q.query(
      `UPDATE control_plane.api_keys
          SET scopes = scopes || jsonb_build_array($1::text)
        WHERE NOT scopes @> jsonb_build_array($1::text)
          AND (
            (kind = 'organisation_admin' AND scopes @> '["organisation_settings.read"]'::jsonb)
            OR (kind <> 'organisation_admin' AND scopes @> jsonb_build_array('configs.' || $2::text))
          )`,
      [scope, configAction(action)],
    );
  }
}

/** Takes workspace scopes back from every key (a migration's `down`). */
export async function revokeWorkspaceScopes(q: QueryRunner, scopes: readonly string[]): Promise<void> {
  await q.query(`UPDATE control_plane.api_keys SET scopes = scopes - $1::text[]`, [scopes]);
}
