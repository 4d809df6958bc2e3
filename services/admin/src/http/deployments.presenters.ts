import type { ConnectionStatus, DeploymentView } from '../domain/deployment.service.ts';
import type { DeploymentAuthSettings, DeploymentInstance } from '../store/entities.ts';

const flag = (value: boolean): 0 | 1 => (value ? 1 : 0);
const iso = (date: Date | null): string | null => (date ? date.toISOString() : null);

function presentAuthSettings(settings: DeploymentAuthSettings) {
  return {
    gateway_base_url: settings.gateway_base_url,
    mcp_gateway_base_url: settings.mcp_gateway_base_url,
    private_link_endpoint: settings.private_link_endpoint,
    use_private_link_proxy: flag(settings.use_private_link_proxy),
    is_dataservice_hosted: flag(settings.is_dataservice_hosted),
    is_playground_proxy_allowed: flag(settings.is_playground_proxy_allowed),
    disable_vendor_gateway: flag(settings.disable_vendor_gateway),
    allow_all_workspaces: flag(settings.allow_all_workspaces),
    workspaces_allowed: settings.workspaces_allowed,
    jwt_subs_allowed: settings.jwt_subs_allowed,
    jwt_sub_workspace_mapping: settings.jwt_sub_workspace_mapping,
  };
}

function presentInstance(instance: DeploymentInstance) {
  return {
    instance_id: instance.instanceId,
    version: instance.version,
    features: instance.features,
    first_seen_at: instance.firstSeenAt.toISOString(),
    last_heartbeat_at: instance.lastHeartbeatAt.toISOString(),
  };
}

/**
 * The deployment object: flags as 0 or 1, times as ISO 8601 UTC (null when never), the
 * credentials' password only masked. `last_synced_at` is the newest heartbeat of any of its
 * gateway instances; `version` is that instance's, and `instances` lists them all, newest first.
 */
export function presentDeployment(
  { deployment, instances }: DeploymentView,
  connectionStatus: ConnectionStatus,
  maskedCredentials: { username: string; password: string } | null,
) {
  const newest = instances[0];
  return {
    id: deployment.id,
    object: 'deployment' as const,
    name: deployment.name,
    slug: deployment.slug,
    type: deployment.type,
    status: deployment.status,
    is_default: flag(deployment.isDefault),
    connection_status: connectionStatus,
    created_by: deployment.createdBy,
    created_at: deployment.createdAt.toISOString(),
    last_updated_at: deployment.updatedAt.toISOString(),
    last_synced_at: iso(newest?.lastHeartbeatAt ?? null),
    last_resynced_at: iso(deployment.lastResyncedAt),
    tags: deployment.tags,
    auth_settings: presentAuthSettings(deployment.authSettings),
    deployment_config: deployment.deploymentConfig,
    workspaces: deployment.workspaces,
    credentials: maskedCredentials,
    client_auth: deployment.clientAuth,
    version: newest?.version ?? null,
    features: newest?.features ?? null,
    instances: instances.map(presentInstance),
  };
}
