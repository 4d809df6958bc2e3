import type { MessageInitShape } from '@bufbuild/protobuf';
import { BadRequest } from '@switchyard/core';
import type { CallerRules, ServiceHandlers } from '@switchyard/runtime';
import { identity } from '@switchyard/proto';
import type { ApiKeyService } from '../domain/api-key.service.ts';
import type { KeySettingsService } from '../domain/key-settings.service.ts';
import type { WorkspaceService } from '../domain/workspace.service.ts';
import {
  KEY_SETTING_NAMES,
  type KeySettingName,
  type KeySettingValues,
} from '../store/key-settings.repository.ts';

const kinds = {
  organisation_admin: identity.ApiKeyKind.ORGANISATION_ADMIN,
  workspace_service: identity.ApiKeyKind.WORKSPACE_SERVICE,
  workspace_user: identity.ApiKeyKind.WORKSPACE_USER,
} as const;

/** The IdentityService methods served here; SCIM's are in membership.handlers.ts. */
type IdentityMethods = 'resolveApiKey' | 'resolveWorkspace' | 'getKeySettings' | 'updateKeySettings';

/**
 * Gateway, admin and log-export authenticate their HTTP callers through control-plane
 * (remotePrincipalLookup, remoteWorkspaceLookup); only admin's organisation settings read and
 * write the key settings.
 */
export const identityCallers: Pick<CallerRules<typeof identity.IdentityService>, IdentityMethods> = {
  resolveApiKey: ['gateway', 'admin', 'log-export'],
  resolveWorkspace: ['gateway', 'admin', 'log-export'],
  getKeySettings: ['admin'],
  updateKeySettings: ['admin'],
};

export function identityHandlers(
  apiKeys: Pick<ApiKeyService, 'resolveApiKey'>,
  workspaces: Pick<WorkspaceService, 'resolveWorkspace'>,
  keySettings: Pick<KeySettingsService, 'find' | 'update'>,
): Pick<ServiceHandlers<typeof identity.IdentityService>, IdentityMethods> {
  return {
    resolveApiKey: async ({ keyHash }) => {
      const principal = await apiKeys.resolveApiKey(keyHash);
      if (!principal) return {};
      return {
        principal: {
          apiKeyId: principal.apiKeyId,
          organisationId: principal.organisationId,
          workspaceId: principal.workspaceId ?? '',
          workspaceSlug: principal.workspaceSlug ?? '',
          kind: kinds[principal.kind],
          scopes: principal.scopes,
          expiresAtMs: String(principal.expiresAt ?? 0),
          userId: principal.userId ?? '',
          name: principal.name,
          organisationCreatedAtMs: String(principal.organisationCreatedAt ?? 0),
          authMethod:
            principal.authMethod === 'oauth' || principal.authMethod === 'session'
              ? principal.authMethod
              : '',
          oauthClientId: principal.oauthClientId ?? '',
          oauthResource: principal.oauthResource ?? '',
          defaultConfig: principal.defaults?.config ?? '',
          defaultMetadata: principal.defaults?.metadata ?? {},
          configOverrideRefused: principal.defaults ? !principal.defaults.allowConfigOverride : false,
        },
      };
    },
    resolveWorkspace: async ({ organisation, workspace }) => {
      const found = await workspaces.resolveWorkspace(organisation, workspace);
      if (!found) return {};
      return {
        workspaceId: found.workspace.id,
        workspaceSlug: found.workspace.slug,
        organisationId: found.organisation.id,
        organisationCreatedAtMs: String(found.organisation.createdAt.getTime()),
        defaultConfig: found.defaultConfig ?? '',
      };
    },
    getKeySettings: async ({ organisationId }) => ({
      settings: toProto(await keySettings.find(organisationId)),
    }),
    updateKeySettings: async ({ organisationId, set, clear, updatedBy }) => {
      const unknown = clear.find((name) => !(KEY_SETTING_NAMES as readonly string[]).includes(name));
      if (unknown !== undefined)
        throw new BadRequest(`Unknown key setting '${unknown}'.`, { param: 'clear' });
      return {
        settings: toProto(
          await keySettings.update(organisationId, fromProto(set), clear as KeySettingName[], updatedBy),
        ),
      };
    },
  };
}

function toProto(values: KeySettingValues): MessageInitShape<typeof identity.KeySettingsSchema> {
  return {
    userApiKeyAutoCreate: values.user_api_key_auto_create,
    defaultWorkspaceUserApiKeyAutoCreate: values.default_workspace_user_api_key_auto_create,
    userApiKeyAutoCreateScopes: values.user_api_key_auto_create_scopes
      ? { scopes: values.user_api_key_auto_create_scopes }
      : undefined,
    userApiKeyRotationPeriod: values.user_api_key_rotation_period,
    workspaceSecuritySettingsOverride: values.workspace_security_settings_override
      ? { sections: values.workspace_security_settings_override }
      : undefined,
  };
}

function fromProto(set: identity.KeySettings | undefined): KeySettingValues {
  const values: KeySettingValues = {};
  if (!set) return values;
  if (set.userApiKeyAutoCreate !== undefined) values.user_api_key_auto_create = set.userApiKeyAutoCreate;
  if (set.defaultWorkspaceUserApiKeyAutoCreate !== undefined) {
    values.default_workspace_user_api_key_auto_create = set.defaultWorkspaceUserApiKeyAutoCreate;
  }
  if (set.userApiKeyAutoCreateScopes)
    values.user_api_key_auto_create_scopes = set.userApiKeyAutoCreateScopes.scopes;
  if (set.userApiKeyRotationPeriod !== undefined)
    values.user_api_key_rotation_period = set.userApiKeyRotationPeriod;
  if (set.workspaceSecuritySettingsOverride) {
    values.workspace_security_settings_override = set.workspaceSecuritySettingsOverride.sections;
  }
  return values;
}
