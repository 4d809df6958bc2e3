import type { DataSource } from 'typeorm';
import { z } from 'zod';
import {
  bodyLimitEnv,
  bodyLimitsFrom,
  env,
  loadConfig,
  SecretBox,
  sharedEnv,
  type Logger,
} from '@switchyard/core';
import { ApiKeyCache, jwtEnvSchema } from '@switchyard/access';
import {
  invalidateApiKeys,
  onChanges,
  need,
  serveScoped,
  callerAuthentication,
  describedOnly,
  type ServiceDefinition,
  type ServiceInstance,
} from '@switchyard/runtime';
import {
  batches,
  configs,
  guardrails as guardrailProto,
  identity,
  mcp,
  policy,
  prompts as promptProto,
} from '@switchyard/proto';
import { systemResolver } from '@switchyard/rules';
import { ConfigService } from './domain/config.service.ts';
import { PolicyService } from './domain/policy.service.ts';
import { GuardrailService } from './domain/guardrail.service.ts';
import { guardrailEntities } from './store/guardrail.entities.ts';
import { GuardrailRepository } from './store/guardrail.repository.ts';
import { Guardrails1763700000024 } from './store/migrations/1763700000024-guardrails.ts';
import { FeedbackService } from './domain/feedback.service.ts';
import { FeedbackRepository } from './store/feedback.repository.ts';
import { Feedback1763700000026 } from './store/migrations/1763700000026-feedback.ts';
import { WorkspaceArchive1763700000029 } from './store/migrations/1763700000029-workspace-archive.ts';
import { DeploymentScopes1763700000030 } from './store/migrations/1763700000030-deployment-scopes.ts';
import { SecretReferenceScopes1763700000031 } from './store/migrations/1763700000031-secret-reference-scopes.ts';
import { IntegrationWorkspaceScopes1763700000032 } from './store/migrations/1763700000032-integration-workspace-scopes.ts';
import { policyDirectoryCallers, policyDirectoryHandlers } from './grpc/policy-directory.handlers.ts';
import {
  guardrailDirectoryCallers,
  guardrailDirectoryHandlers,
} from './grpc/guardrail-directory.handlers.ts';
import { policyEntities } from './store/policy.entities.ts';
import { PolicyRepository } from './store/policy.repository.ts';
import { Policies1763700000022 } from './store/migrations/1763700000022-policies.ts';
import { PolicyScopes1763700000023 } from './store/migrations/1763700000023-policy-scopes.ts';
import { ApiKeyService } from './domain/api-key.service.ts';
import { BootstrapService, type BootstrapResult } from './domain/bootstrap.service.ts';
import { KeySettingsService } from './domain/key-settings.service.ts';
import { MemberService } from './domain/member.service.ts';
import { WorkspaceService } from './domain/workspace.service.ts';
import { oauthEnvSchema } from './domain/oauth.ts';
import { OAuthAuthorizationService } from './domain/oauth-authorization.service.ts';
import { OAuthClientService } from './domain/oauth-client.service.ts';
import { OAuthTokenService } from './domain/oauth-token.service.ts';
import { configCallers, configHandlers } from './grpc/config.handlers.ts';
import { identityCallers, identityHandlers } from './grpc/identity.handlers.ts';
import { membershipCallers, membershipHandlers } from './grpc/membership.handlers.ts';
import { ssoSessionCallers, ssoSessionHandlers } from './grpc/sso-session.handlers.ts';
import { SsoSessionService } from './domain/sso-session.service.ts';
import { SsoSessionRepository } from './store/sso-session.repository.ts';
import { controlPlaneRouter } from './http/routes.ts';
import { configEntities } from './store/config.entities.ts';
import { ConfigRepository } from './store/config.repository.ts';
import { SCHEMA, entities } from './store/entities.ts';
import { IdentityRepository } from './store/identity.repository.ts';
import { KeySettingsRepository } from './store/key-settings.repository.ts';
import { memberEntities } from './store/member.entities.ts';
import { MemberRepository } from './store/member.repository.ts';
import { OAuthRepository } from './store/oauth.repository.ts';
import { Init1763700000000 } from './store/migrations/1763700000000-init.ts';
import { Configs1763700000004 } from './store/migrations/1763700000004-configs.ts';
import { WorkspaceDefaults1763700000008 } from './store/migrations/1763700000008-workspace-defaults.ts';
import { ApiKeyRotation1763700000009 } from './store/migrations/1763700000009-api-key-rotation.ts';
import { Members1763700000010 } from './store/migrations/1763700000010-members.ts';
import { ApiKeyScopes1763700000011 } from './store/migrations/1763700000011-api-key-scopes.ts';
import { KeySettings1763700000012 } from './store/migrations/1763700000012-key-settings.ts';
import { Sessions1763700000017 } from './store/migrations/1763700000017-sessions.ts';
import { SessionService } from './domain/session.service.ts';
import { SessionRepository } from './store/session.repository.ts';
import { WorkspaceSecuritySettings1763700000016 } from './store/migrations/1763700000016-workspace-security-settings.ts';
import { AuditLogScope1763700000014 } from './store/migrations/1763700000014-audit-log-scope.ts';
import { SsoScopes1763700000015 } from './store/migrations/1763700000015-sso-scopes.ts';
import { OAuth1763700000020 } from './store/migrations/1763700000020-oauth.ts';
import { ScimScopes1763700000021 } from './store/migrations/1763700000021-scim-scopes.ts';
import { ApiKeyDefaults1763700000033 } from './store/migrations/1763700000033-api-key-defaults.ts';
import { OAuthResource1763700000036 } from './store/migrations/1763700000036-oauth-resource.ts';
import { Mcp1763700000040 } from './store/migrations/1763700000040-mcp.ts';
import { McpRepository } from './store/mcp.repository.ts';
import { McpIntegrationService } from './domain/mcp-integration.service.ts';
import { McpServerService } from './domain/mcp-server.service.ts';
import { McpSyncSchedule } from './domain/mcp-sync-schedule.ts';
import { mcpDirectoryCallers, mcpDirectoryHandlers } from './grpc/mcp-directory.handlers.ts';
import { GuardrailSecretMappings1763700000053 } from './store/migrations/1763700000053-guardrail-secret-mappings.ts';
import { SecretReferenceMappings } from './clients/secret-references.ts';
import { Batches1763700000052 } from './store/migrations/1763700000052-batches.ts';
import { BatchRepository } from './store/batch.repository.ts';
import { BatchService } from './domain/batch.service.ts';
import { batchRecordCallers, batchRecordHandlers } from './grpc/batch-records.handlers.ts';
import { AgentIntegrations1763700000051 } from './store/migrations/1763700000051-agent-integrations.ts';
import { AgentRepository } from './store/agent.repository.ts';
import { AgentIntegrationService } from './domain/agent-integration.service.ts';
import { Prompts1763700000050 } from './store/migrations/1763700000050-prompts.ts';
import { PromptRepository } from './store/prompt.repository.ts';
import { PromptService } from './domain/prompt.service.ts';
import { promptDirectoryCallers, promptDirectoryHandlers } from './grpc/prompt-directory.handlers.ts';

const apiKeyPrefix = env.string('sy-').meta({ description: 'prefix of newly issued API keys' });
const adminKey = env.optionalString().meta({
  description:
    'presets the admin key of the first organisation, used when that organisation is created (first start); later changes are ignored. In Helm, from a Secret',
});

const configSchema = z.object({
  API_KEY_PREFIX: apiKeyPrefix,
  HEADER_PREFIX: sharedEnv.HEADER_PREFIX,
  SWITCHYARD_ADMIN_KEY: adminKey,
  SWITCHYARD_ENCRYPTION_KEY: sharedEnv.SWITCHYARD_ENCRYPTION_KEY,
  TRUSTED_CUSTOM_HOSTS: sharedEnv.TRUSTED_CUSTOM_HOSTS,
  MCP_GATEWAY_BASE_URL: sharedEnv.MCP_GATEWAY_BASE_URL,
  MCP_SYNC_INTERVAL_SECONDS: env.int(900, 0, 604_800).meta({
    description:
      "how often each MCP integration's capabilities are read again from its upstream, in seconds; 0: only on create and on demand",
  }),
  MCP_SYNC_TIMEOUT_MS: env.int(10_000, 500, 120_000).meta({
    description:
      'how long one read of an MCP integration’s capabilities (or a test of an MCP server) may take, in ms',
  }),
  AGENT_CARD_CONNECT_TIMEOUT_MS: env.int(5_000, 100, 60_000).meta({
    description:
      "how long opening the connection to an agent's endpoint (to fetch its agent card) may take, in ms",
  }),
  AGENT_CARD_TIMEOUT_MS: env.int(10_000, 200, 120_000).meta({
    description:
      'how long fetching an agent card may take in all (redirects and both discovery paths included), in ms',
  }),
  ...bodyLimitEnv,
});

/** What the `bootstrap` command reads. */
export const bootstrapEnvSchema = z.object({
  DATABASE_URL: sharedEnv.DATABASE_URL,
  SWITCHYARD_ADMIN_KEY: adminKey,
  API_KEY_PREFIX: apiKeyPrefix,
});

export interface ControlPlane extends ServiceInstance {
  bootstrap(options: { adminKey?: string | undefined; withWorkspaceKey: boolean }): Promise<BootstrapResult>;
}

/** Organisations, workspaces, users and their memberships, API keys and saved configs; the identity source every other service asks. */
export const controlPlane: ServiceDefinition<ControlPlane> = {
  name: 'control-plane',
  database: {
    schema: SCHEMA,
    entities: [...entities, ...configEntities, ...memberEntities, ...policyEntities, ...guardrailEntities],
    migrations: [
      Init1763700000000,
      Configs1763700000004,
      WorkspaceDefaults1763700000008,
      ApiKeyRotation1763700000009,
      Members1763700000010,
      ApiKeyScopes1763700000011,
      KeySettings1763700000012,
      AuditLogScope1763700000014,
      SsoScopes1763700000015,
      WorkspaceSecuritySettings1763700000016,
      Sessions1763700000017,
      OAuth1763700000020,
      ScimScopes1763700000021,
      Policies1763700000022,
      PolicyScopes1763700000023,
      Guardrails1763700000024,
      Feedback1763700000026,
      WorkspaceArchive1763700000029,
      DeploymentScopes1763700000030,
      SecretReferenceScopes1763700000031,
      IntegrationWorkspaceScopes1763700000032,
      ApiKeyDefaults1763700000033,
      OAuthResource1763700000036,
      Mcp1763700000040,
      Prompts1763700000050,
      AgentIntegrations1763700000051,
      Batches1763700000052,
      GuardrailSecretMappings1763700000053,
    ],
  },
  bus: true,
  // Usage figures come from the policy service; without it only the usage routes answer 503.
  // Secret mappings (of guardrail webhooks and MCP integrations) are resolved by admin;
  // without it only resources that have them are refused.
  clients: ['usageLedger', 'secretReferences'],
  toleratesOutageOf: ['usageLedger', 'secretReferences'],
  // The SCIM body limit is validated with the others, and used by admin only.
  settings: configSchema
    .omit({ MAX_SCIM_REQUEST_BODY: true })
    .extend(oauthEnvSchema.shape)
    .extend(jwtEnvSchema.shape),
  describeRoutes: () =>
    controlPlaneRouter(
      { workspaces: describedOnly('workspaces'), apiKeys: describedOnly('API keys') },
      describedOnly('saved configs'),
      describedOnly('members'),
      describedOnly('authentication'),
      {
        clients: describedOnly('OAuth clients'),
        authorization: describedOnly('OAuth authorization'),
        tokens: describedOnly('OAuth tokens'),
        resolveKey: describedOnly('key resolution'),
      },
      describedOnly('sessions'),
      describedOnly('rate and usage limit policies'),
      describedOnly('guardrails'),
      describedOnly('feedback'),
      bodyLimitsFrom(loadConfig(z.object(bodyLimitEnv), {})),
      {
        integrations: describedOnly('MCP integrations'),
        servers: describedOnly('MCP servers'),
        gatewayBaseUrl: undefined,
      },
      describedOnly('batch records'),
      describedOnly('agent integrations'),
      describedOnly('prompts'),
    ).routes(),
  async create({ db, bus, clients, env: processEnv, logger, resolve = systemResolver }) {
    const config = loadConfig(configSchema, processEnv);
    const manager = need(db, 'database').manager;
    const repo = new IdentityRepository(manager);
    const configRepo = new ConfigRepository(manager);
    const events = need(bus, 'event bus');
    const oauthRepo = new OAuthRepository(manager);
    const oauthOptions = { prefix: config.API_KEY_PREFIX, settings: loadConfig(oauthEnvSchema, processEnv) };
    const oauth = {
      clients: new OAuthClientService(oauthRepo, oauthOptions),
      authorization: new OAuthAuthorizationService(oauthRepo, oauthOptions),
      tokens: new OAuthTokenService(oauthRepo, events, oauthOptions),
    };
    const sessions = new SessionService(new SessionRepository(manager), events);
    // Bearer secrets that are not API keys: OAuth access tokens, then browser sessions.
    const otherSecrets = {
      resolveAccessToken: async (hash: string) =>
        (await oauth.tokens.resolveAccessToken(hash)) ?? sessions.resolve(hash),
    };
    const keySettings = new KeySettingsService(new KeySettingsRepository(manager));
    const workspaces = new WorkspaceService(repo, configRepo, keySettings, events);
    const apiKeys = new ApiKeyService(
      repo,
      workspaces,
      configRepo,
      keySettings,
      events,
      config.API_KEY_PREFIX,
      otherSecrets,
    );
    const bootstrap = new BootstrapService(repo, logger, config.API_KEY_PREFIX);

    const members = new MemberService(
      new MemberRepository(manager),
      workspaces,
      apiKeys,
      events,
      (organisationId, userId, workspaceId) =>
        oauth.tokens.revokeUserTokens(organisationId, userId, workspaceId),
    );
    const policies = new PolicyService(
      new PolicyRepository(manager),
      workspaces,
      apiKeys,
      need(clients.usageLedger, 'usage ledger client'),
      events,
    );
    const secretMappings = new SecretReferenceMappings(clients.secretReferences);
    const guardrails = new GuardrailService(
      new GuardrailRepository(manager),
      workspaces,
      events,
      new SecretBox(config.SWITCHYARD_ENCRYPTION_KEY),
      secretMappings,
      logger,
    );
    const savedConfigs = new ConfigService(
      configRepo,
      workspaces,
      events,
      (organisationId, workspaceId, slug) => guardrails.usableIn(organisationId, workspaceId, slug),
    );
    const mcpRepo = new McpRepository(manager);
    const mcpHosts = { trusted: config.TRUSTED_CUSTOM_HOSTS, resolve };
    const mcpIntegrations = new McpIntegrationService(
      mcpRepo,
      workspaces,
      events,
      new SecretBox(config.SWITCHYARD_ENCRYPTION_KEY),
      mcpHosts,
      { timeoutMs: config.MCP_SYNC_TIMEOUT_MS, intervalSeconds: config.MCP_SYNC_INTERVAL_SECONDS },
      secretMappings,
      logger,
    );
    const guardrailRepo = new GuardrailRepository(manager);
    const mcpServers = new McpServerService(
      mcpRepo,
      mcpIntegrations,
      workspaces,
      (organisationId, ref) => guardrailRepo.find(organisationId, ref),
      events,
      { ...mcpHosts, timeoutMs: config.MCP_SYNC_TIMEOUT_MS },
      logger,
    );
    const mcpSchedule = new McpSyncSchedule(mcpIntegrations, config.MCP_SYNC_INTERVAL_SECONDS, logger);
    const batchRecords = new BatchService(new BatchRepository(manager));
    const agentIntegrations = new AgentIntegrationService(
      new AgentRepository(manager),
      workspaces,
      events,
      new SecretBox(config.SWITCHYARD_ENCRYPTION_KEY),
      {
        ...mcpHosts,
        connectTimeoutMs: config.AGENT_CARD_CONNECT_TIMEOUT_MS,
        timeoutMs: config.AGENT_CARD_TIMEOUT_MS,
      },
    );
    const prompts = new PromptService(
      new PromptRepository(manager),
      workspaces,
      (organisationId, ref) => repo.findWorkspace(organisationId, ref),
      events,
    );
    const ssoSessions = new SsoSessionService(new SsoSessionRepository(manager), members, sessions);
    // Local lookups are cheap, but the cache keeps revocation semantics identical to other services.
    const keys = new ApiKeyCache((hash) => apiKeys.resolveApiKey(hash), { ttlMs: 5_000 });
    return {
      ...serveScoped(
        controlPlaneRouter(
          { workspaces, apiKeys },
          savedConfigs,
          members,
          callerAuthentication({
            keys,
            headerPrefix: config.HEADER_PREFIX,
            env: processEnv,
            workspaces: async (organisation, workspace) => {
              const found = await workspaces.resolveWorkspace(organisation, workspace);
              return found
                ? {
                    id: found.workspace.id,
                    slug: found.workspace.slug,
                    organisationId: found.organisation.id,
                    organisationCreatedAt: found.organisation.createdAt.getTime(),
                    defaultConfig: found.defaultConfig,
                  }
                : null;
            },
          }),
          { ...oauth, resolveKey: (token) => keys.resolve(token) },
          sessions,
          policies,
          guardrails,
          new FeedbackService(new FeedbackRepository(manager), workspaces, events),
          bodyLimitsFrom(config),
          { integrations: mcpIntegrations, servers: mcpServers, gatewayBaseUrl: config.MCP_GATEWAY_BASE_URL },
          batchRecords,
          agentIntegrations,
          prompts,
        ),
      ),
      grpc: (server) =>
        server
          .add(
            identity.IdentityService,
            { ...identityHandlers(apiKeys, workspaces, keySettings), ...membershipHandlers(members) },
            { ...identityCallers, ...membershipCallers },
          )
          .add(configs.ConfigService, configHandlers(savedConfigs), configCallers)
          .add(identity.SsoSessionService, ssoSessionHandlers(ssoSessions), ssoSessionCallers)
          .add(policy.PolicyDirectoryService, policyDirectoryHandlers(policies), policyDirectoryCallers)
          .add(
            guardrailProto.GuardrailDirectoryService,
            guardrailDirectoryHandlers(guardrails),
            guardrailDirectoryCallers,
          )
          .add(mcp.McpDirectoryService, mcpDirectoryHandlers(mcpServers), mcpDirectoryCallers)
          .add(batches.BatchRecordService, batchRecordHandlers(batchRecords), batchRecordCallers)
          .add(promptProto.PromptDirectoryService, promptDirectoryHandlers(prompts), promptDirectoryCallers),
      bootstrap: (options) => bootstrap.bootstrap(options),
      async stop() {
        await mcpSchedule.stop();
        await mcpIntegrations.settled();
      },
      async start() {
        await onChanges(events, logger, 'control-plane', invalidateApiKeys(keys));
        mcpSchedule.start();
        if (config.SWITCHYARD_ADMIN_KEY) {
          await bootstrap.bootstrap({ adminKey: config.SWITCHYARD_ADMIN_KEY, withWorkspaceKey: false });
        }
      },
    };
  },
};

/**
 * Usage is the policy service's to tell: until this process is given a client of its usage
 * ledger, the routes that show or reset usage answer 503 and every other route serves on.
 */
/** The `bootstrap` command: creates the first organisation on an already-migrated database. */
export async function bootstrapDatabase(
  dataSource: DataSource,
  logger: Logger,
  options: { adminKey?: string | undefined; apiKeyPrefix: string },
): Promise<BootstrapResult> {
  const service = new BootstrapService(
    new IdentityRepository(dataSource.manager),
    logger,
    options.apiKeyPrefix,
  );
  return service.bootstrap({ adminKey: options.adminKey, withWorkspaceKey: true });
}
