import { effectiveBlockInlineConfig } from '@switchyard/rules';
import { assertOrganisationAdmin, type Principal } from '@switchyard/access';
import { publishChange, type EventBus } from '@switchyard/adapters';
import { events } from '@switchyard/proto';
import type { OrganisationSettingValues } from '../store/entities.ts';
import type {
  OrganisationSettingsChange,
  OrganisationSettingsRepository,
} from '../store/organisation-settings.repository.ts';
import type { OrganisationSettingsUpdate } from './organisation-settings.schemas.ts';

/** Where an effective value comes from: the organisation's own choice, or the default. */
export type SettingSource = 'organisation' | 'default';

/** API-key provisioning and rotation: kept by control-plane beside the keys they govern. */
export interface KeySettings {
  userApiKeyAutoCreate?: boolean | undefined;
  defaultWorkspaceUserApiKeyAutoCreate?: boolean | undefined;
  userApiKeyAutoCreateScopes?: string[] | undefined;
  userApiKeyRotationPeriod?: number | undefined;
  workspaceSecuritySettingsOverride?: string[] | undefined;
}

export type KeySettingName =
  | 'user_api_key_auto_create'
  | 'default_workspace_user_api_key_auto_create'
  | 'user_api_key_auto_create_scopes'
  | 'user_api_key_rotation_period'
  | 'workspace_security_settings_override';

export interface KeySettingsStore {
  get(organisationId: string): Promise<KeySettings>;
  update(
    organisationId: string,
    set: KeySettings,
    clear: KeySettingName[],
    updatedBy: string,
  ): Promise<KeySettings>;
}

export interface EffectiveOrganisationSettings {
  blockInlineConfig: boolean;
  blockInlineConfigSource: SettingSource;
  /** Fields log exports may not hold; empty when the organisation never chose. */
  exportDeniedFields: string[];
  keys: KeySettings;
}

const KEY_FIELDS = {
  userApiKeyAutoCreate: 'user_api_key_auto_create',
  defaultWorkspaceUserApiKeyAutoCreate: 'default_workspace_user_api_key_auto_create',
  userApiKeyAutoCreateScopes: 'user_api_key_auto_create_scopes',
  userApiKeyRotationPeriod: 'user_api_key_rotation_period',
  workspaceSecuritySettingsOverride: 'workspace_security_settings_override',
} as const satisfies Record<keyof KeySettings, KeySettingName>;

/** Organisation-wide settings: organisation admins choose them, the data plane enforces them. */
export class OrganisationSettingsService {
  constructor(
    private readonly repo: OrganisationSettingsRepository,
    private readonly bus: EventBus,
    private readonly keySettings: KeySettingsStore,
  ) {}

  async show(principal: Principal): Promise<EffectiveOrganisationSettings> {
    assertOrganisationAdmin(principal);
    const [choices, keys] = await Promise.all([
      this.choices(principal.organisationId),
      this.keySettings.get(principal.organisationId),
    ]);
    return effective(choices, keys, principal);
  }

  /** Gateways drop their cached choices on the change event. */
  async update(
    principal: Principal,
    update: OrganisationSettingsUpdate,
  ): Promise<EffectiveOrganisationSettings> {
    assertOrganisationAdmin(principal);
    const keySet: KeySettings = {};
    const keyClear: KeySettingName[] = [];
    for (const [field, name] of Object.entries(KEY_FIELDS) as Array<[keyof KeySettings, KeySettingName]>) {
      const value = update[field];
      if (value === null) keyClear.push(name);
      else if (value !== undefined) (keySet as Record<string, unknown>)[field] = value;
    }
    // Key settings first: a refused change there leaves the rest unchanged too.
    const keys =
      Object.keys(keySet).length > 0 || keyClear.length > 0
        ? await this.keySettings.update(principal.organisationId, keySet, keyClear, principal.apiKeyId)
        : await this.keySettings.get(principal.organisationId);
    const change: OrganisationSettingsChange = { set: {}, clear: [] };
    if (update.blockInlineConfig === null) change.clear.push('block_inline_config');
    else if (update.blockInlineConfig !== undefined)
      change.set.block_inline_config = update.blockInlineConfig;
    if (update.exportSettings === null) change.clear.push('export_settings');
    else if (update.exportSettings !== undefined)
      change.set.export_settings = { deniedFields: update.exportSettings.deniedFields };
    const saved = await this.repo.update(principal.organisationId, change, principal.apiKeyId);
    publishChange(this.bus, {
      entity: 'organisation_settings',
      entityId: principal.organisationId,
      organisationId: principal.organisationId,
      action: events.ChangeAction.UPDATED,
      cacheKey: principal.organisationId,
    });
    return effective(saved, keys, principal);
  }

  /** The organisation's own choices, without defaults: what gateways combine with their own switches. */
  async choices(organisationId: string): Promise<OrganisationSettingValues> {
    return (await this.repo.find(organisationId))?.settings ?? {};
  }
}

/** Defaults that depend on when the organisation was created are taken from the caller's key. */
function effective(
  choices: OrganisationSettingValues,
  keys: KeySettings,
  principal: Principal,
): EffectiveOrganisationSettings {
  const explicit = choices.block_inline_config;
  return {
    blockInlineConfig: effectiveBlockInlineConfig({
      explicit,
      organisationCreatedAt: principal.organisationCreatedAt,
      // BLOCK_INLINE_CONFIG is a gateway switch; this shows the organisation's own setting.
      forced: false,
    }),
    blockInlineConfigSource: typeof explicit === 'boolean' ? 'organisation' : 'default',
    exportDeniedFields: choices.export_settings?.deniedFields ?? [],
    keys,
  };
}
