import type { ServiceHandlers } from '@switchyard/platform';
import { identity } from '@switchyard/proto';
import type { IdentityService } from '../domain/identity.service.ts';

const kinds = {
  organisation_admin: identity.ApiKeyKind.ORGANISATION_ADMIN,
  workspace_service: identity.ApiKeyKind.WORKSPACE_SERVICE,
  workspace_user: identity.ApiKeyKind.WORKSPACE_USER,
} as const;

export function identityHandlers(service: IdentityService): ServiceHandlers<typeof identity.IdentityService> {
  return {
    resolveApiKey: async ({ keyHash }) => {
      const principal = await service.resolveApiKey(keyHash);
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
          authMethod: principal.authMethod === 'oauth' ? 'oauth' : '',
          oauthClientId: principal.oauthClientId ?? '',
        },
      };
    },
    resolveWorkspace: async ({ organisation, workspace }) => {
      const found = await service.resolveWorkspace(organisation, workspace);
      if (!found) return {};
      return {
        workspaceId: found.workspace.id,
        workspaceSlug: found.workspace.slug,
        organisationId: found.organisation.id,
        organisationCreatedAtMs: String(found.organisation.createdAt.getTime()),
      };
    },
  };
}
