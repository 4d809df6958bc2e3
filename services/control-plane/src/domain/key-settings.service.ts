import type {
  KeySettingName,
  KeySettingValues,
  KeySettingsRepository,
} from '../store/key-settings.repository.ts';

/**
 * An organisation's key provisioning and rotation choices (organisation_key_settings): admin's
 * organisation settings read and write them; workspaces and API keys follow them.
 */
export class KeySettingsService {
  constructor(private readonly repo: KeySettingsRepository) {}

  /** The organisation's choices (absent = default). */
  find(organisationId: string): Promise<KeySettingValues> {
    return this.repo.find(organisationId);
  }

  /** Stores the set fields and drops the cleared ones; admin's organisation settings call this. */
  update(
    organisationId: string,
    set: KeySettingValues,
    clear: readonly KeySettingName[],
    updatedBy: string,
  ): Promise<KeySettingValues> {
    return this.repo.update(organisationId, set, clear, updatedBy);
  }

  /** The rotation period the organisation enforces for user API keys, in days; null when none. */
  async enforcedRotationDays(organisationId: string): Promise<number | null> {
    return (await this.repo.find(organisationId)).user_api_key_rotation_period ?? null;
  }

  /** Sections of security_settings that workspaces may set for themselves. */
  async overridableSecuritySections(organisationId: string): Promise<readonly string[]> {
    return (await this.repo.find(organisationId)).workspace_security_settings_override ?? [];
  }
}
