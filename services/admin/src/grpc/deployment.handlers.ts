import type { CallerRules, ServiceHandlers } from '@switchyard/runtime';
import type { admin } from '@switchyard/proto';
import type { DeploymentService } from '../domain/deployment.service.ts';

/** Only gateways report for a deployment and are handed its authentication settings. */
export const deploymentCallers: CallerRules<typeof admin.DeploymentService> = {
  heartbeat: ['gateway'],
};

export function deploymentHandlers(
  service: DeploymentService,
): ServiceHandlers<typeof admin.DeploymentService> {
  return {
    heartbeat: async ({ organisationId, deployment: ref, instanceId, version }) => {
      const deployment = await service.heartbeat(organisationId, ref, { instanceId, version });
      const settings = deployment.authSettings;
      return {
        deploymentId: deployment.id,
        slug: deployment.slug,
        authSettings: {
          gatewayBaseUrl: settings.gateway_base_url ?? '',
          mcpGatewayBaseUrl: settings.mcp_gateway_base_url ?? '',
          privateLinkEndpoint: settings.private_link_endpoint ?? '',
          usePrivateLinkProxy: settings.use_private_link_proxy,
          isDataserviceHosted: settings.is_dataservice_hosted,
          isPlaygroundProxyAllowed: settings.is_playground_proxy_allowed,
          disableVendorGateway: settings.disable_vendor_gateway,
          allowAllWorkspaces: settings.allow_all_workspaces,
          // The gateway serves the workspaces allowed and those the deployment is attached to.
          workspacesAllowed: [
            ...new Set([...settings.workspaces_allowed, ...deployment.workspaces.map((w) => w.id)]),
          ],
          jwtSubsAllowed: settings.jwt_subs_allowed,
          jwtSubWorkspaceMapping: settings.jwt_sub_workspace_mapping,
        },
        settingsRevision: BigInt(deployment.settingsRevision),
        settingsUpdatedAt: deployment.updatedAt.toISOString(),
      };
    },
  };
}
