import { controlPlane } from '@switchyard/control-plane';
import { startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { adminService } from '../service.ts';

/**
 * Control-plane and admin, host names resolved from `dns` (a name not in it resolves to
 * nothing): no test resolves a name for real. `resolved` records every name asked, in order.
 */
export function startAdminWithResolver(
  dns: Readonly<Record<string, string[]>>,
  resolved: string[],
): Promise<ServiceHarness> {
  return startServiceHarness({
    services: [controlPlane, adminService],
    resolve: async (host) => {
      resolved.push(host);
      return dns[host] ?? [];
    },
  });
}

/** OAuth client-credentials settings of an Azure OpenAI integration, with `secret` as its client secret. */
export const oauthSettings = (secret: string) => ({
  provider_auth_type: 'oauthClientCredentials',
  oauth_token_endpoint: 'https://login.example.com/tenant-1/oauth2/v2.0/token',
  oauth_client_id: '00000000-0000-0000-0000-000000000001',
  oauth_client_secret: secret,
});
