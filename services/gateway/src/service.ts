import { z } from 'zod';
import { env, loadConfig, sharedEnv } from '@switchyard/core';
import { ApiKeyCache, jwtEnvSchema, type Principal } from '@switchyard/access';
import type { Subscription } from '@switchyard/adapters';
import {
  invalidateApiKeys,
  need,
  serveScoped,
  onChanges,
  remotePrincipalLookup,
  remoteWorkspaceLookup,
  callerAuthentication,
  describedOnly,
  type ServiceDefinition,
} from '@switchyard/runtime';
import { ConfigCache } from './clients/config-cache.ts';
import {
  DeploymentReporter,
  deploymentEnv,
  deploymentEnvSchema,
  servedByDeployment,
} from './clients/deployment.ts';
import { IntegrationCache } from './clients/integration-cache.ts';
import { integrationDirectory } from './clients/integration-directory.ts';
import {
  OrganisationSettingsCache,
  invalidateOrganisationSettings,
} from './clients/organisation-settings.ts';
import { PolicyGate } from './clients/policy-gate.ts';
import { GuardrailDirectory } from './clients/guardrail-directory.ts';
import { McpDirectory } from './clients/mcp-directory.ts';
import { PromptDirectory } from './clients/prompt-directory.ts';
import { PromptRuns } from './domain/prompt-runs.ts';
import { PromptsRoute } from './http/prompts.ts';
import { BatchRecords } from './clients/batch-records.ts';
import { GatewayBatches } from './domain/batches.ts';
import { McpGateway } from './mcp/gateway.ts';
import { McpSessions } from './mcp/sessions.ts';
import { customHostRefused, inspectCustomHost, publicAddressLookup } from '@switchyard/rules';
import { ChatCompletions } from './domain/chat-completions.ts';
import { ForwardedOperations } from './domain/forwarded-operations.ts';
import { ModelCatalog } from './domain/model-catalog.ts';
import { systemResolver } from './domain/unsafe-host.ts';
import { validChatBody } from './http/chat-body.ts';
import { ChatCompletionsRoute } from './http/chat-completions.ts';
import { ForwardedOperationsRoute } from './http/forwarded-operations.ts';
import { MessagesRoute } from './http/messages.ts';
import { MessagesPassthrough } from './domain/messages-passthrough.ts';
import { Responses } from './domain/responses.ts';
import { ResponsesRoute } from './http/responses.ts';
import { KeyValueStoredResponses } from './store/stored-responses.ts';
import { gatewayRouter } from './http/routes.ts';
import { gatewayMetrics } from './metrics/gateway-metrics.ts';
import { KeyValueResponseStore } from './store/response-store.ts';
import { createProviders } from './providers/index.ts';
import { createUpstreamDispatcher, proxyEnvSchema } from './upstream/http-client.ts';
import { WebhookClient } from './upstream/webhook-client.ts';
import { DEFAULT_WIF_TOKEN_FILE, ProviderTokens } from './upstream/provider-tokens.ts';

const configSchema = z.object({
  HEADER_PREFIX: sharedEnv.HEADER_PREFIX,
  REQUEST_TIMEOUT: env.int(300_000, 1, 3_600_000).meta({
    description: 'outbound timeout in ms; a provider that does not answer in time gives 408',
  }),
  POLICY_TIMEOUT_MS: env.int(250, 1, 60_000).meta({ description: 'deadline of the hot-path policy check' }),
  POLICY_FAIL_OPEN: env.bool(true).meta({
    description:
      'allow requests of a key the gateway has not yet seen a policy answer for when the policy service cannot answer (`false`: 503); a key seen before follows the failure modes of the limits last seen for it',
  }),
  POLICY_DEFAULT_COMPLETION_TOKENS: env.int(1024, 1, 1_000_000).meta({
    description:
      'completion tokens a request that sets neither `max_completion_tokens` nor `max_tokens` is expected to use, for the estimate checked against token and cost limits before the call (a stream is charged as it runs)',
  }),
  POLICY_LEASE_REQUESTS: env.int(256, 0, 1_000).meta({
    description:
      'the most requests a gateway may admit on a lease: a block of a limit taken from the shared counter in the same atomic step as a check, at most a sixteenth of what the limit has left (so near the limit every request is checked), given back after a second unused; `0`: every request is checked',
  }),
  MAX_REQUEST_BODY: env.size('25mb').meta({ description: 'largest accepted request body (larger: 413)' }),
  BLOCK_INLINE_CONFIG: env.bool(false).meta({
    description:
      'force `block_inline_config` on for every organisation: refuse (403, naming the header) requests that choose a provider (`x-vendor-provider: <kind>`), custom host or config inline; saved integrations and configs keep working',
  }),
  TRUSTED_CUSTOM_HOSTS: sharedEnv.TRUSTED_CUSTOM_HOSTS,
  RESPONSES_TTL_SECONDS: env.int(86_400, 60, 2_592_000).meta({
    description:
      'how long the gateway keeps a response it translated for a provider without a Responses API (`/v1/responses` with `store` not false), for `previous_response_id`, `item_reference` and GET of it',
  }),
  MCP_GATEWAY_BASE_URL: sharedEnv.MCP_GATEWAY_BASE_URL,
  OAUTH_ISSUER: sharedEnv.OAUTH_ISSUER,
  WIF_TOKEN_FILE: env.string(DEFAULT_WIF_TOKEN_FILE).meta({
    description:
      "the gateway's projected Kubernetes service-account token, exchanged at the security token service of integrations whose `provider_auth_type` is `wif`; read anew at each exchange, as the kubelet rotates it",
  }),
});

/** The data plane: stateless, scaled horizontally; no database and no synchronous Kafka write on the hot path. */
export const gatewayService: ServiceDefinition = {
  name: 'gateway',
  bus: true,
  // Without the policy service the failure policy decides (see PolicyGate).
  toleratesOutageOf: ['bus', 'kv', 'policy'],
  kv: true,
  clients: [
    'identity',
    'integrations',
    'configs',
    'organisationSettings',
    'deployments',
    'policy',
    'guardrailDirectory',
    'mcpDirectory',
    'promptDirectory',
    'batchRecords',
  ],
  // The hot path makes many promises; its own request-scope log lines name the request.
  requestLogContext: false,
  // undici parses upstream answers with llhttp compiled to WebAssembly. With V8's default tiered
  // compilation, the first upstream call raised the process's memory by about 35 MB for a moment
  // and left 10 MB behind; the baseline compiler's code alone parses as fast for these answers.
  v8Flags: ['--liftoff-only'],
  settings: configSchema
    .extend(proxyEnvSchema.shape)
    .extend(jwtEnvSchema.shape)
    .extend(deploymentEnvSchema.shape),
  describeRoutes: () =>
    gatewayRouter(
      describedOnly('chat completions'),
      describedOnly('messages'),
      describedOnly('forwarded operations'),
      describedOnly('authentication'),
      loadConfig(configSchema, {}).MAX_REQUEST_BODY,
      describedOnly('responses'),
      describedOnly('prompts'),
      { gateway: describedOnly('MCP gateway') },
    ).routes(),
  async create({ bus, kv, clients, env: processEnv, logger, metrics, resolve = systemResolver }) {
    const config = loadConfig(configSchema, processEnv);
    const deploymentConfig = loadConfig(deploymentEnv, processEnv);
    const events = need(bus, 'event bus');
    const dispatcher = createUpstreamDispatcher(processEnv);
    // Providers' own hosts and trusted hosts skip the address check; other custom hosts pass it
    // at every connection, in the lookup the connection makes anyway.
    const customHostDispatcher = createUpstreamDispatcher(processEnv, publicAddressLookup(resolve));
    const identityClient = need(clients.identity, 'identity client');
    const keys = new ApiKeyCache(remotePrincipalLookup(identityClient));
    // JWT callers' workspaces, with the workspace's default config; dropped when it changes.
    const workspaces = remoteWorkspaceLookup(identityClient);
    const integrationsClient = need(clients.integrations, 'integrations client');
    const integrations = new IntegrationCache(integrationsClient, {
      trustedCustomHosts: config.TRUSTED_CUSTOM_HOSTS,
    });
    const configs = new ConfigCache(need(clients.configs, 'configs client'));
    const guardrails = new GuardrailDirectory(
      need(clients.guardrailDirectory, 'guardrail directory client'),
      logger,
    );
    const organisationSettings = new OrganisationSettingsCache(
      need(clients.organisationSettings, 'organisation settings client'),
      { forced: config.BLOCK_INLINE_CONFIG, logger },
    );
    const dropOrganisationSettings = invalidateOrganisationSettings(organisationSettings);
    const headerPrefix = config.HEADER_PREFIX.toLowerCase();
    const policyGate = new PolicyGate(need(clients.policy, 'policy client'), logger, {
      timeoutMs: config.POLICY_TIMEOUT_MS,
      failOpen: config.POLICY_FAIL_OPEN,
      leaseRequests: config.POLICY_LEASE_REQUESTS,
      headerPrefix,
      metrics,
    });
    const tokens = new ProviderTokens({
      dispatcher,
      customHostDispatcher,
      trustedHosts: config.TRUSTED_CUSTOM_HOSTS,
      wifTokenFile: config.WIF_TOKEN_FILE,
      logger,
    });
    const context = {
      providers: createProviders(dispatcher, tokens),
      customHostProviders: createProviders(customHostDispatcher, tokens),
      inline: {
        blockInlineConfig: (principal: Principal) => organisationSettings.blockInlineConfig(principal),
        trustedCustomHosts: config.TRUSTED_CUSTOM_HOSTS,
      },
      integrations,
      configs,
      guardrails,
      guardrailDefaults: (principal: Principal) => organisationSettings.guardrailDefaults(principal),
      logger,
      webhooks: new WebhookClient({
        dispatcher,
        customHostDispatcher,
        trustedHosts: config.TRUSTED_CUSTOM_HOSTS,
      }),
      policy: policyGate,
      defaultCompletionTokens: config.POLICY_DEFAULT_COMPLETION_TOKENS,
      bus: events,
      headerPrefix,
      requestTimeoutMs: config.REQUEST_TIMEOUT,
      cache: new KeyValueResponseStore(need(kv, 'key-value store'), logger),
      // The publish buffer the request events go through is reported with the gateway's series.
      metrics: gatewayMetrics(metrics, () => events.stats()),
    };
    const chatCompletions = new ChatCompletions({
      ...context,
      validate: validChatBody,
    });
    const chat = new ChatCompletionsRoute(chatCompletions, headerPrefix, logger, metrics);
    // The Messages interface is passed through to Anthropic, and answered by the same chat
    // completions, translated both ways, for every other provider.
    const messages = new MessagesRoute(
      chatCompletions,
      new MessagesPassthrough(context),
      headerPrefix,
      logger,
      metrics,
    );
    // Batches created through the gateway are recorded in control-plane, in the background.
    const batchRecords = new BatchRecords(
      need(clients.batchRecords, 'batch records client'),
      logger,
      context.metrics,
    );
    const forwarded = new ForwardedOperationsRoute(
      new ForwardedOperations(context, new ModelCatalog(integrationDirectory(integrationsClient))),
      headerPrefix,
      logger,
      metrics,
      new GatewayBatches(batchRecords, logger),
    );
    // Translated responses are chat completions, answered as /v1/chat/completions answers them.
    const storedResponses = new KeyValueStoredResponses(
      need(kv, 'key-value store'),
      logger,
      config.RESPONSES_TTL_SECONDS,
    );
    const responses = new ResponsesRoute(
      chatCompletions,
      new Responses(context, storedResponses, validChatBody),
      forwarded,
      headerPrefix,
      logger,
      metrics,
    );
    // Saved prompts are rendered into chat completion requests and answered as chat answers them.
    const promptDirectory = new PromptDirectory(need(clients.promptDirectory, 'prompt directory client'));
    const prompts = new PromptsRoute(
      chatCompletions,
      new PromptRuns(promptDirectory, logger),
      validChatBody,
      headerPrefix,
      logger,
      metrics,
    );
    // A gateway running as a named deployment takes its callers' rules from that deployment.
    const deployment =
      deploymentConfig.DEPLOYMENT && deploymentConfig.DEPLOYMENT_ORGANISATION
        ? new DeploymentReporter(need(clients.deployments, 'deployments client'), {
            organisationId: deploymentConfig.DEPLOYMENT_ORGANISATION,
            deployment: deploymentConfig.DEPLOYMENT,
            intervalMs: deploymentConfig.DEPLOYMENT_HEARTBEAT_SECONDS * 1000,
            logger,
          })
        : undefined;
    const authentication = callerAuthentication({
      keys,
      headerPrefix,
      // Tokens act in the deployment's organisation unless JWT_ORGANISATION names one.
      env: deployment
        ? {
            ...processEnv,
            JWT_ORGANISATION: processEnv.JWT_ORGANISATION || deploymentConfig.DEPLOYMENT_ORGANISATION,
          }
        : processEnv,
      workspaces,
      ...(deployment ? { jwtAdmission: () => deployment.jwtAdmission() } : {}),
    });
    const mcpServers = new McpDirectory(need(clients.mcpDirectory, 'MCP directory client'));
    const mcpGateway = new McpGateway({
      servers: mcpServers,
      policy: policyGate,
      guardrails,
      webhooks: context.webhooks,
      bus: events,
      metrics: context.metrics,
      logger,
      // Trusted hosts are reached directly; any other only at public addresses.
      dispatcherFor: (url) => {
        const inspected = inspectCustomHost(url, config.TRUSTED_CUSTOM_HOSTS);
        if (inspected.refused !== undefined) throw customHostRefused(inspected.refused, 'url');
        return inspected.trusted ? dispatcher : customHostDispatcher;
      },
      tokens,
      requestTimeoutMs: config.REQUEST_TIMEOUT,
      headerPrefix,
      sessions: new McpSessions(need(kv, 'key-value store'), logger),
    });
    let subscription: Subscription | undefined;
    return {
      ...serveScoped(
        gatewayRouter(
          chat,
          messages,
          forwarded,
          deployment ? servedByDeployment(deployment, authentication) : authentication,
          config.MAX_REQUEST_BODY,
          responses,
          prompts,
          { gateway: mcpGateway, baseUrl: config.MCP_GATEWAY_BASE_URL, issuer: config.OAUTH_ISSUER },
        ),
      ),
      ...(deployment ? { readiness: { deployment: () => deployment.ready() } } : {}),
      async start() {
        deployment?.start();
        const dropApiKey = invalidateApiKeys(keys, workspaces);
        subscription = await onChanges(events, logger, 'gateway', (change) => {
          dropApiKey(change);
          dropOrganisationSettings(change);
          if (change.entity === 'integration' && change.cacheKey) integrations.invalidate(change.cacheKey);
          if (change.entity === 'policy') policyGate.policiesChanged();
          if (change.entity === 'config') configs.invalidateOrganisation(change.organisationId);
          if (change.entity === 'guardrail') guardrails.invalidateOrganisation(change.organisationId);
          if (change.entity === 'mcp_server') mcpServers.invalidateOrganisation(change.organisationId);
          // A rotated or removed secret reference: guardrails and MCP servers may send its value.
          if (change.entity === 'secret_reference') {
            guardrails.invalidateOrganisation(change.organisationId);
            mcpServers.invalidateOrganisation(change.organisationId);
          }
          if (change.entity === 'prompt' || change.entity === 'prompt_partial') {
            promptDirectory.invalidateOrganisation(change.organisationId);
          }
        });
      },
      async stop() {
        deployment?.stop();
        await subscription?.stop();
        // Settlements still waiting go out before the policy client closes.
        await policyGate.close();
        await Promise.all([dispatcher.close(), customHostDispatcher.close()]);
      },
    };
  },
};
