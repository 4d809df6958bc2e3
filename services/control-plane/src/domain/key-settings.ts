import { UnprocessableEntity } from '@switchyard/core';
import { DATA_PLANE_SCOPES, type Scope } from '@switchyard/access';
import type { Workspace } from '../store/entities.ts';
import type { KeySettingValues } from '../store/key-settings.repository.ts';
import type { RotationPolicy } from './api-keys.ts';

/**
 * The rotation policy a workspace-user key gets while the organisation enforces a rotation
 * period: the enforced period. A policy asking for another period, a policy cleared, or a
 * next_rotation_at set by hand is refused (422 naming the field).
 */
export function enforceRotation(
  requested: RotationPolicy | null | undefined,
  enforcedDays: number | null,
): RotationPolicy | null | undefined {
  if (enforcedDays === null) return requested;
  const enforced = `the organisation enforces a rotation period of ${enforcedDays} days for user API keys`;
  if (requested === undefined) return { periodDays: enforcedDays, nextRotationAt: null };
  if (requested === null) {
    throw new UnprocessableEntity(`The rotation policy cannot be removed: ${enforced}.`, {
      param: 'rotation_policy',
      code: 'rotation_enforced',
    });
  }
  if (requested.nextRotationAt !== null) {
    throw new UnprocessableEntity(`next_rotation_at cannot be set while rotation is enforced: ${enforced}.`, {
      param: 'rotation_policy.next_rotation_at',
      code: 'rotation_enforced',
    });
  }
  if (requested.periodDays !== null && requested.periodDays !== enforcedDays) {
    throw new UnprocessableEntity(
      `A rotation period of ${requested.periodDays} days differs from what ${enforced}.`,
      {
        param: 'rotation_policy.rotation_period_days',
        code: 'rotation_enforced',
      },
    );
  }
  return { periodDays: enforcedDays, nextRotationAt: null };
}

/**
 * Whether members joining `workspace` get a workspace-user key: the workspace's own choice,
 * else (for the organisation's default workspace) default_workspace_user_api_key_auto_create,
 * else the organisation's user_api_key_auto_create; off by default.
 */
export function autoCreatesUserKeys(workspace: Workspace, settings: KeySettingValues): boolean {
  if (workspace.userApiKeyAutoCreate !== null) return workspace.userApiKeyAutoCreate;
  if (workspace.slug === 'default' && settings.default_workspace_user_api_key_auto_create !== undefined) {
    return settings.default_workspace_user_api_key_auto_create;
  }
  return settings.user_api_key_auto_create ?? false;
}

/** The data-plane scopes an auto-created key gets, before the member's role bounds them. */
export function autoCreatedScopes(settings: KeySettingValues): readonly Scope[] {
  const limited = settings.user_api_key_auto_create_scopes;
  return limited ? DATA_PLANE_SCOPES.filter((scope) => limited.includes(scope)) : DATA_PLANE_SCOPES;
}

/**
 * A workspace's security settings after a change: each section given replaces that section,
 * null drops it, others stay. A section the organisation has not opened to override is
 * refused (422 naming it) and nothing changes; dropping one is always allowed.
 */
export type SecuritySettings = Record<string, object | string | number | boolean>;

export function mergeSecuritySettings(
  current: SecuritySettings,
  changes: Record<string, object | string | number | boolean | null>,
  overridable: readonly string[],
): SecuritySettings {
  const merged = { ...current };
  for (const [section, value] of Object.entries(changes)) {
    if (value === null) {
      delete merged[section];
      continue;
    }
    if (!overridable.includes(section)) {
      throw new UnprocessableEntity(
        `The organisation does not let workspaces override the '${section}' security settings.`,
        { param: `security_settings.${section}`, code: 'security_section_not_overridable' },
      );
    }
    merged[section] = value;
  }
  return merged;
}
