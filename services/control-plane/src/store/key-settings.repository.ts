import type { EntityManager } from 'typeorm';

/** An organisation's key provisioning and rotation choices, as stored; absent = the default. */
export interface KeySettingValues {
  user_api_key_auto_create?: boolean;
  default_workspace_user_api_key_auto_create?: boolean;
  user_api_key_auto_create_scopes?: string[];
  user_api_key_rotation_period?: number;
  /** Sections of security_settings that workspaces may set for themselves. */
  workspace_security_settings_override?: string[];
}

export type KeySettingName = keyof KeySettingValues;

export const KEY_SETTING_NAMES: readonly KeySettingName[] = [
  'user_api_key_auto_create',
  'default_workspace_user_api_key_auto_create',
  'user_api_key_auto_create_scopes',
  'user_api_key_rotation_period',
  'workspace_security_settings_override',
];

/*
 * Raw SQL: the settings are one jsonb document per organisation, with no TypeORM entity, and
 * a change is one upsert that drops the cleared fields and merges the set ones, so that
 * concurrent changes of different fields both hold. The read is SQL too, to keep one idiom.
 */
export class KeySettingsRepository {
  constructor(private readonly manager: EntityManager) {}

  async find(organisationId: string): Promise<KeySettingValues> {
    const rows: Array<{ settings: KeySettingValues }> = await this.manager.query(
      `SELECT settings FROM control_plane.organisation_key_settings WHERE organisation_id = $1`,
      [organisationId],
    );
    return rows[0]?.settings ?? {};
  }

  /** Sets and clears fields in one statement, so concurrent changes of different fields both hold. */
  async update(
    organisationId: string,
    set: KeySettingValues,
    clear: readonly KeySettingName[],
    updatedBy: string,
  ): Promise<KeySettingValues> {
    const rows: Array<{ settings: KeySettingValues }> = await this.manager.query(
      `INSERT INTO control_plane.organisation_key_settings AS s (organisation_id, settings, updated_by)
         VALUES ($1, $2::jsonb, $4)
       ON CONFLICT (organisation_id) DO UPDATE
         SET settings = (s.settings - $3::text[]) || $2::jsonb, updated_at = now(), updated_by = $4
       RETURNING settings`,
      [organisationId, JSON.stringify(set), [...clear], updatedBy],
    );
    return rows[0]!.settings;
  }
}
