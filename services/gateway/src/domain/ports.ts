import type { CustomHostInspection } from '@switchyard/rules';
import type { Principal } from '@switchyard/access';
import type { PricingMultiplier } from '../pricing/cost.ts';
import type { PolicyHold, UsageAmount } from './policy.ts';

/**
 * What the request path asks of other services. The gRPC clients and the caches they fill
 * (clients/) implement these; service.ts wires them in.
 */

/** A saved integration's decrypted credentials, as routing uses them. */
export interface IntegrationCredentials {
  /** Admin's id of the integration. */
  id?: string;
  slug: string;
  provider: string;
  apiKey: string;
  baseUrl: string | undefined;
  /**
   * What the unsafe-host check says of baseUrl without resolving it, once per fetch: a host
   * saved before the check existed, or no longer trusted, is refused here too.
   */
  customHost: CustomHostInspection | undefined;
  headers: Record<string, string>;
  settings: Record<string, string>;
  pricing: PricingMultiplier | undefined;
  /** The models set on the integration with settings of their own, by the model's name. */
  models: ReadonlyMap<string, IntegrationModelSettings>;
}

/** One model's own settings on an integration: they apply to requests for that model. */
export interface IntegrationModelSettings {
  enabled: boolean;
  /** Replaces the integration's base URL for this model, as the unsafe-host check inspected it. */
  customHost: CustomHostInspection | undefined;
  /** Added to the upstream request; never in place of the provider's credentials. */
  customHeaders: Record<string, string>;
}

/** An organisation-level integration the workspace is denied the use of (admin's workspace access). */
export interface IntegrationDenied {
  workspaceDenied: true;
}

/** Saved integrations by slug, as a workspace may use them; null when there is none. */
export interface IntegrationSource {
  get(
    organisationId: string,
    workspaceId: string,
    slug: string,
  ): Promise<IntegrationCredentials | IntegrationDenied | null>;
}

/** The integrations a workspace may use: their slugs and provider kinds (GET /v1/models). */
export interface IntegrationDirectory {
  listIntegrations(
    organisationId: string,
    workspaceId: string,
  ): Promise<{
    integrations: ReadonlyArray<{
      slug: string;
      provider: string;
      /** The models set on the integration: an enabled one is listed, a disabled one is not. */
      models?: ReadonlyArray<{ slug: string; enabled: boolean }>;
    }>;
  }>;
}

/** What the policy check is asked about one routed attempt. */
export interface PolicyCheckRequest {
  principal: Principal;
  provider: string;
  model: string;
  metadata: Record<string, string>;
  requestId: string;
  /** What is called: model calls (`llm`, the default) or an MCP server's tools (`mcp_tools`). */
  target?: 'llm' | 'mcp_tools' | undefined;
  /** Target `mcp_tools`: the MCP server's slug and the tool called. */
  mcpServer?: string | undefined;
  toolName?: string | undefined;
  /**
   * What the attempt is expected to use: the prompt estimate and its output limit, priced.
   * Asked for only when the policy service is (a key nothing applies to skips the work).
   */
  estimate(): UsageAmount;
}

/**
 * The hot path's policy check: resolves with what the request holds when it may go on,
 * throws the refusal (a PolicyRefusal) otherwise.
 */
export interface PolicyCheck {
  check(request: PolicyCheckRequest): Promise<PolicyHold>;
}

/** One POST to a webhook. */
export interface WebhookCall {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
}

export interface WebhookAnswer {
  status: number;
  body: string;
}

/**
 * The gateway's HTTP client for webhooks: refuses URLs the unsafe-host check refuses, gives up
 * after `timeoutMs` (throwing), and reads at most a bounded answer.
 */
export interface GuardrailWebhookClient {
  post(call: WebhookCall): Promise<WebhookAnswer>;
}
