import { BadRequest, NotFound, NotImplemented, type PageQuery, type SecretBox } from '@switchyard/core';
import type { Principal } from '@switchyard/access';
import { publishChange, type EventBus } from '@switchyard/adapters';
import { events } from '@switchyard/proto';
import { checkCustomHost } from '@switchyard/rules';
import type { z } from 'zod';
import type {
  AgentAuthType,
  AgentIntegration,
  AgentIntegrationListItem,
  AgentRepository,
  AgentStoredConfigurations,
  AgentWorkspaceAccess,
} from '../store/agent.repository.ts';
import type {
  agentIntegrationWorkspacesBody,
  createAgentIntegrationBody,
  fetchAgentCardBody,
  listAgentIntegrationsQuery,
  updateAgentIntegrationBody,
} from './agent.schemas.ts';
import {
  checkAgentCard,
  fetchAgentCard,
  type AgentCardFetchOptions,
  type FetchedAgentCard,
} from './agent-card.ts';
import { IntegrationAccess } from './integration-access.ts';
import { mcpSlugFrom, actorOf } from './mcp-integration.service.ts';
import { sealConfigurations } from './mcp-secrets.ts';
import type { WorkspaceService } from './workspace.service.ts';

export type CreateAgentIntegrationInput = z.output<typeof createAgentIntegrationBody>;
export type UpdateAgentIntegrationInput = z.output<typeof updateAgentIntegrationBody>;
export type ListAgentIntegrationsInput = z.output<typeof listAgentIntegrationsQuery>;
export type AgentIntegrationWorkspacesInput = z.output<typeof agentIntegrationWorkspacesBody>;
export type FetchAgentCardInput = z.output<typeof fetchAgentCardBody>;

/** The skills an agent card lists (A2A `skills`: objects with an `id`, a `name`…). */
export function skillsOf(card: Record<string, unknown> | null): Array<Record<string, unknown>> {
  const skills = card?.skills;
  if (!Array.isArray(skills)) return [];
  return skills.filter(
    (s): s is Record<string, unknown> => s !== null && typeof s === 'object' && !Array.isArray(s),
  );
}

/**
 * Agent integrations: an upstream agent's endpoint, how to call it and its agent card, of the
 * organisation (usable by the workspaces it is enabled for) or of one workspace. An
 * organisation admin key manages all of them; a workspace key its workspace's, and it reads the
 * organisation-level ones enabled for its workspace. Anything else is "not found".
 */
export class AgentIntegrationService {
  private readonly access: IntegrationAccess<AgentIntegration>;

  constructor(
    private readonly repo: AgentRepository,
    workspaces: Pick<WorkspaceService, 'getWorkspace'>,
    private readonly bus: EventBus,
    private readonly secrets: SecretBox,
    private readonly fetchOptions: AgentCardFetchOptions,
  ) {
    this.access = new IntegrationAccess('agent integration', repo, workspaces);
  }

  /** POST /fetch-agent-card: the card of an endpoint, nothing stored. */
  async fetchCard(principal: Principal, input: FetchAgentCardInput): Promise<FetchedAgentCard> {
    if (input.organisation_id !== undefined && input.organisation_id !== principal.organisationId) {
      throw new NotFound(`Organisation '${input.organisation_id}' not found.`, { param: 'organisation_id' });
    }
    if (input.authType === 'oauth_auto' || input.authType === 'oauth_client_credentials') {
      throw new NotImplemented(
        `authType \`${input.authType}\` is not built yet: use \`headers\` or \`none\`.`,
        {
          param: 'authType',
        },
      );
    }
    const headers: Record<string, string> = { ...input.headers };
    if (input.authType === 'headers') {
      if (input.authToken === undefined) {
        throw new BadRequest('authType `headers` needs `authToken`.', { param: 'authToken' });
      }
      headers[input.authHeader ?? 'Authorization'] = input.authToken;
    }
    const param = input.endpoint !== undefined ? 'endpoint' : 'url';
    return fetchAgentCard((input.endpoint ?? input.url)!, headers, this.fetchOptions, param);
  }

  async create(principal: Principal, input: CreateAgentIntegrationInput): Promise<AgentIntegration> {
    const authType = this.supported(input.auth_type);
    const workspaceId = await this.access.workspaceFor(principal, input);
    await checkCustomHost(input.url, { ...this.fetchOptions, param: 'url' });
    const configurations = this.seal(input.configurations, {});
    this.checkAuth(authType, configurations);
    const card = await this.cardFor(input.url, authType, configurations, input);
    const created = await this.access.insertWithSlug(
      input.slug,
      () => mcpSlugFrom(input.name).replace(/^mcp-/, 'agent-'),
      (slug) =>
        this.repo.insert({
          organisationId: principal.organisationId,
          workspaceId,
          name: input.name,
          slug,
          description: input.description ?? null,
          url: input.url,
          authType,
          configurations,
          agentCard: card?.agentCard ?? null,
          agentCardFetchedAt: card?.fetchedAt ?? null,
          globalWorkspaceAccess: false,
          ownerId: actorOf(principal),
        }),
    );
    this.announce(created, events.ChangeAction.CREATED);
    return created;
  }

  /** By id or slug, when the caller may see it. */
  get(principal: Principal, ref: string): Promise<AgentIntegration> {
    return this.access.get(principal, ref);
  }

  async list(
    principal: Principal,
    query: ListAgentIntegrationsInput,
    page: PageQuery,
  ): Promise<[AgentIntegrationListItem[], number]> {
    const workspaceId = await this.access.listWorkspace(principal, query);
    return this.repo.list(
      principal.organisationId,
      { workspaceId, type: query.type, search: query.search },
      page,
    );
  }

  async update(
    principal: Principal,
    ref: string,
    input: UpdateAgentIntegrationInput,
  ): Promise<AgentIntegration> {
    const found = await this.access.writable(principal, ref);
    const authType = input.auth_type === undefined ? found.authType : this.supported(input.auth_type);
    if (input.url !== undefined) await checkCustomHost(input.url, { ...this.fetchOptions, param: 'url' });
    const configurations =
      input.configurations === undefined
        ? found.configurations
        : this.seal(input.configurations, found.configurations);
    this.checkAuth(authType, configurations);
    const card =
      input.agent_card !== undefined || input.fetch_agent_card === true
        ? await this.cardFor(input.url ?? found.url, authType, configurations, input)
        : null;
    const updated = await this.repo.update(found.id, {
      name: input.name,
      description: input.description,
      url: input.url,
      authType: input.auth_type === undefined ? undefined : authType,
      configurations: input.configurations === undefined ? undefined : configurations,
      ...(card ? { agentCard: card.agentCard, agentCardFetchedAt: card.fetchedAt } : {}),
    });
    if (!updated) throw this.access.notFound(ref);
    this.announce(updated, events.ChangeAction.UPDATED);
    return updated;
  }

  async delete(principal: Principal, ref: string): Promise<void> {
    const found = await this.access.writable(principal, ref);
    if (!(await this.repo.delete(found.id))) throw this.access.notFound(ref);
    this.announce(found, events.ChangeAction.DELETED);
  }

  workspaceAccess(
    principal: Principal,
    ref: string,
  ): Promise<{ integration: AgentIntegration; workspaces: AgentWorkspaceAccess[] }> {
    return this.access.workspaceAccess(principal, ref);
  }

  /** Which workspaces may use an organisation-level integration: an organisation admin key's to say. */
  async setWorkspaceAccess(
    principal: Principal,
    ref: string,
    input: AgentIntegrationWorkspacesInput,
  ): Promise<void> {
    const { integration, change } = await this.access.workspaceAccessChange(
      principal,
      ref,
      {
        ...input,
        workspaces: input.workspaces.map((raw) =>
          typeof raw === 'string' ? { id: raw, enabled: true } : raw,
        ),
      },
      (index) => `workspaces[${index}]`,
    );
    await this.repo.setWorkspaceAccess(integration.id, change);
    this.announce(integration, events.ChangeAction.UPDATED);
  }

  /**
   * The card to store: the one given (checked), else the endpoint's (fetched with the
   * integration's headers) unless `fetch_agent_card` is false; null when neither.
   */
  private async cardFor(
    url: string,
    authType: AgentAuthType,
    configurations: AgentStoredConfigurations,
    input: {
      agent_card?: Record<string, unknown> | string | undefined;
      fetch_agent_card?: boolean | undefined;
    },
  ): Promise<{ agentCard: Record<string, unknown>; fetchedAt: Date | null } | null> {
    if (input.agent_card !== undefined) {
      if (input.fetch_agent_card === true) {
        throw new BadRequest('Give `agent_card` or ask for `fetch_agent_card`, not both.', {
          param: 'fetch_agent_card',
        });
      }
      let card: unknown = input.agent_card;
      if (typeof card === 'string') {
        try {
          card = JSON.parse(card);
        } catch {
          throw new BadRequest('`agent_card` is a string that is not valid JSON.', {
            param: 'agent_card',
            code: 'agent_card_invalid_json',
          });
        }
      }
      return { agentCard: checkAgentCard(card, 'agent_card', 'given'), fetchedAt: null };
    }
    if (input.fetch_agent_card === false) return null;
    const headers: Record<string, string> = {};
    if (authType === 'headers') {
      for (const [name, value] of Object.entries(configurations.sealedHeaders ?? {})) {
        headers[name] = this.secrets.decrypt(value);
      }
    }
    const fetched = await fetchAgentCard(url, headers, this.fetchOptions, 'url');
    return { agentCard: fetched.agentCard, fetchedAt: new Date() };
  }

  private seal(
    input: { custom_headers?: Record<string, string> | undefined } | undefined,
    previous: AgentStoredConfigurations,
  ): AgentStoredConfigurations {
    if (input?.custom_headers === undefined) return {};
    const sealed = sealConfigurations({ custom_headers: input.custom_headers }, this.secrets, previous);
    return { sealedHeaders: sealed.sealedHeaders ?? {} };
  }

  private supported(authType: CreateAgentIntegrationInput['auth_type']): AgentAuthType {
    if (authType === 'oauth_auto' || authType === 'oauth_client_credentials') {
      throw new NotImplemented(
        `auth_type \`${authType}\` is not built yet for agent integrations: use \`headers\` or \`none\`.`,
        { param: 'auth_type' },
      );
    }
    return authType;
  }

  private checkAuth(authType: AgentAuthType, stored: AgentStoredConfigurations): void {
    if (authType === 'headers' && Object.keys(stored.sealedHeaders ?? {}).length === 0) {
      throw new BadRequest('auth_type `headers` needs at least one of configurations.custom_headers.', {
        param: 'configurations.custom_headers',
      });
    }
  }

  /** The change gateways (and caches) listen for: entity "agent_integration". */
  private announce(integration: AgentIntegration, action: events.ChangeAction): void {
    publishChange(this.bus, {
      entity: 'agent_integration',
      entityId: integration.id,
      organisationId: integration.organisationId,
      workspaceId: integration.workspaceId ?? '',
      action,
      cacheKey: `${integration.organisationId}:${integration.slug}`,
    });
  }
}
