import type { AgentIntegration, AgentIntegrationListItem } from '../store/agent.repository.ts';
import { maskConfigurations } from '../domain/mcp-secrets.ts';
import { skillsOf } from '../domain/agent-integration.service.ts';
import { integrationHead, integrationTail } from './integration.presenters.ts';

/** An agent integration, its credentials masked; in a list, without its card (its name and skill count instead). */
export function presentAgentIntegration(integration: AgentIntegration | AgentIntegrationListItem) {
  const listed = 'skillsCount' in integration;
  return {
    ...integrationHead(integration),
    configurations: maskConfigurations(integration.configurations),
    ...(listed
      ? { agent_card_name: integration.agentCardName }
      : { agent_card: integration.agentCard, agent_card_name: stringOrNull(integration.agentCard?.name) }),
    agent_card_fetched_at: integration.agentCardFetchedAt?.toISOString() ?? null,
    skills_count: listed ? integration.skillsCount : skillsOf(integration.agentCard).length,
    ...integrationTail(integration),
  };
}

/** One skill of the stored agent card, in the card's own words (snake_case keys added for the common fields). */
export function presentAgentSkill(skill: Record<string, unknown>) {
  return {
    ...skill,
    id: typeof skill.id === 'string' ? skill.id : null,
    name: typeof skill.name === 'string' ? skill.name : null,
    description: typeof skill.description === 'string' ? skill.description : null,
    tags: Array.isArray(skill.tags) ? skill.tags : [],
  };
}

const stringOrNull = (value: unknown): string | null => (typeof value === 'string' ? value : null);
