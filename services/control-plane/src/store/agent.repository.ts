import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { isUniqueViolation } from '@switchyard/adapters';
import type { PageQuery } from '@switchyard/core';
import {
  IntegrationWorkspaces,
  integrationListFilter,
  type IntegrationWorkspaceAccess,
  type WorkspaceAccessChange,
} from './integration-workspaces.ts';
import { byRef, date, rowsOf, setClause, type Row } from './sql.ts';

/*
 * SQL for agent integrations (an upstream agent's endpoint, how to call it and its agent card,
 * of the organisation or of one workspace) and which workspaces may use an organisation-level
 * one.
 */

export type AgentAuthType = 'none' | 'headers';

/** How an integration calls its agent, as stored: header values sealed. */
export interface AgentStoredConfigurations {
  /** Header name → ciphertext. */
  sealedHeaders?: Record<string, string>;
}

export interface AgentIntegration {
  id: string;
  organisationId: string;
  workspaceId: string | null;
  name: string;
  slug: string;
  description: string | null;
  url: string;
  authType: AgentAuthType;
  configurations: AgentStoredConfigurations;
  agentCard: Record<string, unknown> | null;
  agentCardFetchedAt: Date | null;
  globalWorkspaceAccess: boolean;
  ownerId: string;
  createdAt: Date;
  updatedAt: Date;
}

export type NewAgentIntegration = Omit<AgentIntegration, 'id' | 'createdAt' | 'updatedAt'>;

export type AgentIntegrationChanges = Partial<
  Pick<
    AgentIntegration,
    'name' | 'description' | 'url' | 'authType' | 'configurations' | 'agentCard' | 'agentCardFetchedAt'
  >
>;

/** An integration as a list shows it: its card left out (`agentCard` null), its name and skill count instead. */
export type AgentIntegrationListItem = AgentIntegration & {
  agentCardName: string | null;
  skillsCount: number;
};

export type AgentWorkspaceAccess = IntegrationWorkspaceAccess;

const T = 'control_plane.agent_integrations';
const LIST_COLUMNS = [
  'id',
  'organisation_id',
  'workspace_id',
  'name',
  'slug',
  'description',
  'url',
  'auth_type',
  'configurations',
  'agent_card_fetched_at',
  'global_workspace_access',
  'owner_id',
  'created_at',
  'last_updated_at',
]
  .map((c) => `i.${c}`)
  .join(', ');
const W = 'control_plane.agent_integration_workspaces';

function integrationFrom(row: Row): AgentIntegration {
  return {
    id: row.id as string,
    organisationId: row.organisation_id as string,
    workspaceId: (row.workspace_id as string | null) ?? null,
    name: row.name as string,
    slug: row.slug as string,
    description: (row.description as string | null) ?? null,
    url: row.url as string,
    authType: row.auth_type as AgentAuthType,
    configurations: (row.configurations as AgentStoredConfigurations | null) ?? {},
    agentCard: (row.agent_card as Record<string, unknown> | null) ?? null,
    agentCardFetchedAt:
      row.agent_card_fetched_at === null || row.agent_card_fetched_at === undefined
        ? null
        : date(row.agent_card_fetched_at),
    globalWorkspaceAccess: row.global_workspace_access as boolean,
    ownerId: row.owner_id as string,
    createdAt: date(row.created_at),
    updatedAt: date(row.last_updated_at),
  };
}

const COLUMNS: Record<keyof AgentIntegrationChanges, [string, 'json' | 'plain']> = {
  name: ['name', 'plain'],
  description: ['description', 'plain'],
  url: ['url', 'plain'],
  authType: ['auth_type', 'plain'],
  configurations: ['configurations', 'json'],
  agentCard: ['agent_card', 'json'],
  agentCardFetchedAt: ['agent_card_fetched_at', 'plain'],
};

export class AgentRepository {
  private readonly workspaces: IntegrationWorkspaces;

  constructor(private readonly manager: EntityManager) {
    this.workspaces = new IntegrationWorkspaces(manager, { integrations: T, workspaces: W });
  }

  /** Null when the slug is taken in the organisation. */
  async insert(input: NewAgentIntegration): Promise<AgentIntegration | null> {
    try {
      const rows: Row[] = await this.manager.query(
        `INSERT INTO ${T} (id, organisation_id, workspace_id, name, slug, description, url, auth_type,
                           configurations, agent_card, agent_card_fetched_at, global_workspace_access, owner_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10::jsonb, $11, $12, $13) RETURNING *`,
        [
          randomUUID(),
          input.organisationId,
          input.workspaceId,
          input.name,
          input.slug,
          input.description,
          input.url,
          input.authType,
          JSON.stringify(input.configurations),
          input.agentCard === null ? null : JSON.stringify(input.agentCard),
          input.agentCardFetchedAt,
          input.globalWorkspaceAccess,
          input.ownerId,
        ],
      );
      return integrationFrom(rows[0]!);
    } catch (err) {
      if (isUniqueViolation(err)) return null;
      throw err;
    }
  }

  async find(organisationId: string, ref: string): Promise<AgentIntegration | null> {
    const rows: Row[] = await this.manager.query(
      `SELECT * FROM ${T} WHERE organisation_id = $1 AND ${byRef(ref, 2)}`,
      [organisationId, ref],
    );
    return rows[0] ? integrationFrom(rows[0]) : null;
  }

  /**
   * The integrations of an organisation. `workspaceId`: that workspace's own and (unless `type`
   * says `workspace`) the organisation-level ones enabled for it; otherwise all of the
   * organisation's (narrowed by `type`).
   */
  async list(
    organisationId: string,
    filter: {
      workspaceId?: string | undefined;
      type?: 'workspace' | 'organisation' | 'all' | undefined;
      search?: string | undefined;
    },
    page: PageQuery,
  ): Promise<[AgentIntegrationListItem[], number]> {
    const { where, params } = integrationListFilter(W, organisationId, filter);
    const total: Row[] = await this.manager.query(
      `SELECT count(*)::int AS n FROM ${T} i WHERE ${where.join(' AND ')}`,
      params,
    );
    // Not the cards themselves (up to 1 MB each): their name and how many skills they list.
    const rows: Row[] = await this.manager.query(
      `SELECT ${LIST_COLUMNS}, i.agent_card->>'name' AS agent_card_name,
              (SELECT count(*)::int FROM jsonb_array_elements(
                 CASE WHEN jsonb_typeof(i.agent_card->'skills') = 'array' THEN i.agent_card->'skills' ELSE '[]'::jsonb END
               ) s WHERE jsonb_typeof(s) = 'object') AS skills_count
         FROM ${T} i WHERE ${where.join(' AND ')}
        ORDER BY i.created_at DESC, i.id LIMIT ${page.limit} OFFSET ${page.offset}`,
      params,
    );
    return [
      rows.map((row) => ({
        ...integrationFrom(row),
        agentCardName: (row.agent_card_name as string | null) ?? null,
        skillsCount: row.skills_count as number,
      })),
      total[0]!.n as number,
    ];
  }

  async update(id: string, changes: AgentIntegrationChanges): Promise<AgentIntegration | null> {
    const params: unknown[] = [id];
    const sets = setClause(changes, COLUMNS, params);
    const rows: unknown = await this.manager.query(
      `UPDATE ${T} SET ${[...sets, 'last_updated_at = now()'].join(', ')} WHERE id = $1 RETURNING *`,
      params,
    );
    const [row] = rowsOf(rows);
    return row ? integrationFrom(row) : null;
  }

  async delete(id: string): Promise<boolean> {
    const rows: unknown = await this.manager.query(`DELETE FROM ${T} WHERE id = $1 RETURNING id`, [id]);
    return rowsOf(rows).length > 0;
  }

  workspaceAccess(integrationId: string): Promise<AgentWorkspaceAccess[]> {
    return this.workspaces.list(integrationId);
  }

  /** Whether an organisation-level integration may be used in the workspace (its own setting, else the global one). */
  enabledForWorkspace(integration: AgentIntegration, workspaceId: string): Promise<boolean> {
    return this.workspaces.enabledFor(integration, workspaceId);
  }

  /** One transaction: the global switch, the override and every workspace's setting, or none of them. */
  setWorkspaceAccess(integrationId: string, change: WorkspaceAccessChange): Promise<void> {
    return this.workspaces.set(integrationId, change);
  }
}
