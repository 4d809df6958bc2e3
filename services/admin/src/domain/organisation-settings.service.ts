import {
  assertOrganisationAdmin,
  effectiveBlockInlineConfig,
  publishChange,
  type EventBus,
  type Principal,
} from '@switchyard/platform';
import { events } from '@switchyard/proto';
import type { OrganisationSettingValues } from '../store/entities.ts';
import type {
  OrganisationSettingsChange,
  OrganisationSettingsRepository,
} from '../store/organisation-settings.repository.ts';

/** Where an effective value comes from: the organisation's own choice, or the default. */
export type SettingSource = 'organisation' | 'default';

export interface EffectiveOrganisationSettings {
  blockInlineConfig: boolean;
  blockInlineConfigSource: SettingSource;
}

export interface OrganisationSettingsUpdate {
  /** null drops the choice, so that the default applies again; undefined leaves it as it is. */
  blockInlineConfig?: boolean | null | undefined;
}

/** Organisation-wide settings: organisation admins choose them, the data plane enforces them. */
export class OrganisationSettingsService {
  constructor(
    private readonly repo: OrganisationSettingsRepository,
    private readonly bus: EventBus,
  ) {}

  async show(principal: Principal): Promise<EffectiveOrganisationSettings> {
    assertOrganisationAdmin(principal);
    return effective(await this.choices(principal.organisationId), principal);
  }

  /** Gateways drop their cached choices on the change event. */
  async update(
    principal: Principal,
    update: OrganisationSettingsUpdate,
  ): Promise<EffectiveOrganisationSettings> {
    assertOrganisationAdmin(principal);
    const change: OrganisationSettingsChange = { set: {}, clear: [] };
    if (update.blockInlineConfig === null) change.clear.push('block_inline_config');
    else if (update.blockInlineConfig !== undefined)
      change.set.block_inline_config = update.blockInlineConfig;
    const saved = await this.repo.update(principal.organisationId, change, principal.apiKeyId);
    publishChange(this.bus, {
      entity: 'organisation_settings',
      entityId: principal.organisationId,
      organisationId: principal.organisationId,
      action: events.ChangeAction.UPDATED,
      cacheKey: principal.organisationId,
    });
    return effective(saved, principal);
  }

  /** The organisation's own choices, without defaults: what gateways combine with their own switches. */
  async choices(organisationId: string): Promise<OrganisationSettingValues> {
    return (await this.repo.find(organisationId))?.settings ?? {};
  }
}

/** Defaults that depend on when the organisation was created are taken from the caller's key. */
function effective(choices: OrganisationSettingValues, principal: Principal): EffectiveOrganisationSettings {
  const explicit = choices.block_inline_config;
  return {
    blockInlineConfig: effectiveBlockInlineConfig({
      explicit,
      organisationCreatedAt: principal.organisationCreatedAt,
      // BLOCK_INLINE_CONFIG is a gateway switch; this shows the organisation's own setting.
      forced: false,
    }),
    blockInlineConfigSource: typeof explicit === 'boolean' ? 'organisation' : 'default',
  };
}
