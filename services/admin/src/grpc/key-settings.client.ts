import type { ServiceClient } from '@switchyard/runtime';
import type { identity } from '@switchyard/proto';
import type { KeySettings, KeySettingsStore } from '../domain/organisation-settings.service.ts';

function fromProto(settings: identity.KeySettings | undefined): KeySettings {
  if (!settings) return {};
  return {
    userApiKeyAutoCreate: settings.userApiKeyAutoCreate,
    defaultWorkspaceUserApiKeyAutoCreate: settings.defaultWorkspaceUserApiKeyAutoCreate,
    userApiKeyAutoCreateScopes: settings.userApiKeyAutoCreateScopes?.scopes,
    userApiKeyRotationPeriod: settings.userApiKeyRotationPeriod,
    workspaceSecuritySettingsOverride: settings.workspaceSecuritySettingsOverride?.sections,
  };
}

/** Key provisioning and rotation settings, kept by control-plane, read and changed over gRPC. */
export function remoteKeySettings(client: ServiceClient<typeof identity.IdentityService>): KeySettingsStore {
  return {
    async get(organisationId) {
      return fromProto((await client.getKeySettings({ organisationId }, { deadlineMs: 2_000 })).settings);
    },
    async update(organisationId, set, clear, updatedBy) {
      const saved = await client.updateKeySettings(
        {
          organisationId,
          set: {
            userApiKeyAutoCreate: set.userApiKeyAutoCreate,
            defaultWorkspaceUserApiKeyAutoCreate: set.defaultWorkspaceUserApiKeyAutoCreate,
            userApiKeyAutoCreateScopes: set.userApiKeyAutoCreateScopes
              ? { scopes: set.userApiKeyAutoCreateScopes }
              : undefined,
            userApiKeyRotationPeriod: set.userApiKeyRotationPeriod,
            workspaceSecuritySettingsOverride: set.workspaceSecuritySettingsOverride
              ? { sections: set.workspaceSecuritySettingsOverride }
              : undefined,
          },
          clear,
          updatedBy,
        },
        { deadlineMs: 5_000 },
      );
      return fromProto(saved.settings);
    },
  };
}
