import type { EntityManager } from 'typeorm';
import { date, escapeLike, type Row } from './sql.ts';

/*
 * Which workspaces may use an organisation-level integration (MCP or agent): a global switch on
 * the integration's row, and per-workspace settings in a table of their own
 * (integration_id, workspace_id, enabled) that win over it.
 */

export interface IntegrationWorkspaceTables {
  /** The integrations' table (with `global_workspace_access` and `last_updated_at`). */
  integrations: string;
  /** The per-workspace settings' table. */
  workspaces: string;
}

export interface IntegrationWorkspaceAccess {
  workspaceId: string;
  enabled: boolean;
  createdAt: Date;
  updatedAt: Date;
}

export interface WorkspaceAccessChange {
  global?: boolean | undefined;
  override: boolean;
  workspaces: Array<{ id: string; enabled: boolean }>;
}

/**
 * The list filter of an organisation's integrations (alias `i`): with `workspaceId`, that
 * workspace's own and (unless `type` says `workspace`) the organisation-level ones enabled for
 * it; otherwise all of the organisation's, narrowed by `type`; `search` matches name or slug.
 */
export function integrationListFilter(
  workspacesTable: string,
  organisationId: string,
  filter: {
    workspaceId?: string | undefined;
    type?: 'workspace' | 'organisation' | 'all' | undefined;
    search?: string | undefined;
  },
): { where: string[]; params: unknown[] } {
  const params: unknown[] = [organisationId];
  const where = ['i.organisation_id = $1'];
  const type = filter.type ?? 'all';
  if (filter.workspaceId) {
    params.push(filter.workspaceId);
    const own = `i.workspace_id = $${params.length}`;
    const enabled = `(i.workspace_id IS NULL AND COALESCE(
        (SELECT w.enabled FROM ${workspacesTable} w WHERE w.integration_id = i.id AND w.workspace_id = $${params.length}),
        i.global_workspace_access))`;
    where.push(type === 'workspace' ? own : type === 'organisation' ? enabled : `(${own} OR ${enabled})`);
  } else if (type === 'workspace') {
    where.push('i.workspace_id IS NOT NULL');
  } else if (type === 'organisation') {
    where.push('i.workspace_id IS NULL');
  }
  if (filter.search) {
    params.push(`%${escapeLike(filter.search)}%`);
    where.push(`(i.name ILIKE $${params.length} OR i.slug ILIKE $${params.length})`);
  }
  return { where, params };
}

export class IntegrationWorkspaces {
  constructor(
    private readonly manager: EntityManager,
    private readonly tables: IntegrationWorkspaceTables,
  ) {}

  /** The per-workspace settings of an integration, oldest first. */
  async list(integrationId: string): Promise<IntegrationWorkspaceAccess[]> {
    const rows: Row[] = await this.manager.query(
      `SELECT * FROM ${this.tables.workspaces} WHERE integration_id = $1 ORDER BY created_at, workspace_id`,
      [integrationId],
    );
    return rows.map((row) => ({
      workspaceId: row.workspace_id as string,
      enabled: row.enabled as boolean,
      createdAt: date(row.created_at),
      updatedAt: date(row.last_updated_at),
    }));
  }

  /** Whether an integration may be used in the workspace (a workspace's own: only there; else its setting, else the global one). */
  async enabledFor(
    integration: { id: string; workspaceId: string | null; globalWorkspaceAccess: boolean },
    workspaceId: string,
  ): Promise<boolean> {
    if (integration.workspaceId !== null) return integration.workspaceId === workspaceId;
    const rows: Row[] = await this.manager.query(
      `SELECT enabled FROM ${this.tables.workspaces} WHERE integration_id = $1 AND workspace_id = $2`,
      [integration.id, workspaceId],
    );
    return rows[0] ? (rows[0].enabled as boolean) : integration.globalWorkspaceAccess;
  }

  /** One transaction: the global switch, the override and every workspace's setting, or none of them. */
  async set(integrationId: string, change: WorkspaceAccessChange): Promise<void> {
    const { integrations, workspaces } = this.tables;
    await this.manager.transaction(async (manager) => {
      if (change.global !== undefined) {
        await manager.query(
          `UPDATE ${integrations} SET global_workspace_access = $2, last_updated_at = now() WHERE id = $1`,
          [integrationId, change.global],
        );
        if (change.override) {
          await manager.query(`DELETE FROM ${workspaces} WHERE integration_id = $1`, [integrationId]);
        }
      }
      for (const workspace of change.workspaces) {
        await manager.query(
          `INSERT INTO ${workspaces} (integration_id, workspace_id, enabled)
           VALUES ($1, $2, $3)
           ON CONFLICT (integration_id, workspace_id) DO UPDATE SET enabled = $3, last_updated_at = now()`,
          [integrationId, workspace.id, workspace.enabled],
        );
      }
    });
  }
}
