/**
 * update is SQL: a conditional upsert that merges and drops jsonb keys in one statement, so that
 * concurrent writes of different settings both survive. Reads are TypeORM.
 */
import type { EntityManager } from 'typeorm';
import {
  OrganisationSettingsEntity,
  type OrganisationSettingName,
  type OrganisationSettingValues,
  type OrganisationSettings,
} from './entities.ts';

export interface OrganisationSettingsChange {
  set: OrganisationSettingValues;
  /** Settings whose choice is dropped, so that their default applies again. */
  clear: OrganisationSettingName[];
}

/** One row per organisation that ever chose a setting. */
export class OrganisationSettingsRepository {
  constructor(private readonly manager: EntityManager) {}

  find(organisationId: string): Promise<OrganisationSettings | null> {
    return this.manager.getRepository(OrganisationSettingsEntity).findOneBy({ organisationId });
  }

  /**
   * Applies the change in one statement, so that two concurrent writes of different
   * settings both survive.
   */
  async update(
    organisationId: string,
    change: OrganisationSettingsChange,
    updatedBy: string,
  ): Promise<OrganisationSettingValues> {
    const [row] = (await this.manager.query(
      `INSERT INTO admin.organisation_settings AS current (organisation_id, settings, updated_at, updated_by)
       VALUES ($1, $2::jsonb, now(), $4)
       ON CONFLICT (organisation_id) DO UPDATE
         SET settings = (current.settings || $2::jsonb) - $3::text[], updated_at = now(), updated_by = $4
       RETURNING settings`,
      [organisationId, JSON.stringify(change.set), change.clear, updatedBy],
    )) as Array<{ settings: OrganisationSettingValues }>;
    return row!.settings;
  }
}
