import type { RequestHandler } from 'express';
import type { BodyLimits } from '@switchyard/core';
import { ScopedRouter, serveOpenApi } from '@switchyard/runtime';
import type { ConfigService } from '../domain/config.service.ts';
import type { ApiKeyService } from '../domain/api-key.service.ts';
import type { MemberService } from '../domain/member.service.ts';
import type { WorkspaceService } from '../domain/workspace.service.ts';
import { apiKeyRouter } from './api-key.routes.ts';
import { authRouter } from './auth.routes.ts';
import type { SessionService } from '../domain/session.service.ts';
import { configRouter } from './config.routes.ts';
import type { FeedbackService } from '../domain/feedback.service.ts';
import { feedbackRouter } from './feedback.routes.ts';
import type { GuardrailService } from '../domain/guardrail.service.ts';
import { guardrailRouter } from './guardrail.routes.ts';
import type { PolicyService } from '../domain/policy.service.ts';
import { policyRouter } from './policy.routes.ts';
import type { McpIntegrationService } from '../domain/mcp-integration.service.ts';
import type { McpServerService } from '../domain/mcp-server.service.ts';
import type { AgentIntegrationService } from '../domain/agent-integration.service.ts';
import { agentIntegrationRouter } from './agent.routes.ts';
import { mcpIntegrationRouter, mcpRegistryRouter, mcpServerRouter } from './mcp.routes.ts';
import type { BatchService } from '../domain/batch.service.ts';
import { batchRouter } from './batch.routes.ts';
import type { PromptService } from '../domain/prompt.service.ts';
import { promptRouter, removedOrganisationPromptRouter } from './prompt.routes.ts';
import { mountOAuth, type OAuthRouteOptions } from './oauth.routes.ts';
import { userRouter, workspaceMemberRouter } from './member.routes.ts';
import { workspaceRouter } from './workspace.routes.ts';

export function controlPlaneRouter(
  identity: { workspaces: WorkspaceService; apiKeys: ApiKeyService },
  configs: ConfigService,
  members: MemberService,
  authenticated: RequestHandler,
  oauth: Omit<OAuthRouteOptions, 'authenticated' | 'bodyLimit'>,
  sessions: SessionService,
  policies: PolicyService,
  guardrails: GuardrailService,
  feedback: FeedbackService,
  bodyLimits: BodyLimits,
  mcp: { integrations: McpIntegrationService; servers: McpServerService; gatewayBaseUrl: string | undefined },
  batches: BatchService,
  agents: AgentIntegrationService,
  prompts: PromptService,
): ScopedRouter {
  const router = new ScopedRouter();
  const v2 = new ScopedRouter().use(authenticated);

  v2.mount('/workspaces', workspaceRouter(identity.workspaces, bodyLimits.management));
  v2.mount('/api-keys', apiKeyRouter(identity.apiKeys, bodyLimits.management));
  v2.mount('/policies', policyRouter(policies, bodyLimits.management));
  v2.mount('/mcp-integrations', mcpIntegrationRouter(mcp.integrations, bodyLimits.management));
  v2.mount('/mcp-servers', mcpServerRouter(mcp.servers, bodyLimits.management, mcp.gatewayBaseUrl));
  v2.mount('/mcp-registry', mcpRegistryRouter(mcp.servers, mcp.gatewayBaseUrl));
  v2.mount('/batches', batchRouter(batches, bodyLimits.management));
  // Agent integrations only: agent servers (`/agent-servers`) and invoking agents are not built.
  v2.mount('/agent-integrations', agentIntegrationRouter(agents, bodyLimits.management));
  v2.mount('/prompts', promptRouter(prompts, bodyLimits.management));
  // Prompts and partials belonged to the organisation once; they are a workspace's now (410).
  v2.mount('/organisation/prompts', removedOrganisationPromptRouter());
  const feedbackRoutes = feedbackRouter(feedback, bodyLimits.management);
  v2.mount('/feedback', feedbackRoutes);
  // The SDKs send feedback to the gateway's base URL; the ingress routes /v1/feedback here.
  router.mount('/v1/feedback', feedbackRoutes, authenticated);

  // SDKs address configs under the gateway's base URL too; the routing table sends /v1/configs here.
  const configRoutes = configRouter(configs, bodyLimits.management);
  v2.mount('/configs', configRoutes);
  router.mount('/v1/configs', configRoutes, authenticated);
  // The routing table sends /v1/guardrails here, ahead of the gateway's /v1.
  router.mount('/v1/guardrails', guardrailRouter(guardrails, bodyLimits.management), authenticated);

  // The reference serves users under /v1/admin; the routing table sends these two prefixes here, not to admin.
  const admin = new ScopedRouter()
    .mount('/users', userRouter(members, bodyLimits.management))
    .mount('/workspaces', workspaceMemberRouter(members, bodyLimits.management));
  v2.mount('/admin', admin);
  router.mount('/v1/admin', admin, authenticated);

  router.mount('/v1/auth', authRouter(sessions), authenticated);
  mountOAuth(router, { ...oauth, authenticated, bodyLimit: bodyLimits.oauth });
  router.mount('/v2', v2);
  return serveOpenApi(router, 'control-plane');
}
