/*
 * What an integration of the organisation or of one workspace (MCP or agent) shows of itself
 * whatever its kind: its head (who and where it is) and its tail (access, owner, times).
 */

interface PresentedIntegration {
  id: string;
  name: string;
  slug: string;
  description: string | null;
  organisationId: string;
  workspaceId: string | null;
  url: string;
  authType: string;
  globalWorkspaceAccess: boolean;
  ownerId: string;
  createdAt: Date;
  updatedAt: Date;
}

export function integrationHead<A extends string>(integration: PresentedIntegration & { authType: A }) {
  return {
    id: integration.id,
    name: integration.name,
    slug: integration.slug,
    description: integration.description,
    organisation_id: integration.organisationId,
    workspace_id: integration.workspaceId,
    type: integration.workspaceId === null ? ('organisation' as const) : ('workspace' as const),
    url: integration.url,
    auth_type: integration.authType,
  };
}

export function integrationTail(integration: PresentedIntegration) {
  return {
    global_workspace_access:
      integration.workspaceId === null ? { enabled: integration.globalWorkspaceAccess } : null,
    status: 'active',
    owner_id: integration.ownerId,
    created_at: integration.createdAt.toISOString(),
    last_updated_at: integration.updatedAt.toISOString(),
  };
}
