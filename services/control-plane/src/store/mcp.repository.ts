import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { isUniqueViolation } from '@switchyard/adapters';
import type { PageQuery } from '@switchyard/core';
import { isUuid } from '../domain/ids.ts';
import type { StoredSecretMapping } from '../domain/secret-mapping.schemas.ts';
import {
  IntegrationWorkspaces,
  integrationListFilter,
  type IntegrationWorkspaceAccess,
  type WorkspaceAccessChange,
} from './integration-workspaces.ts';
import { byRef, date, dateOrNull, escapeLike, rowsOf, setClause, type Row } from './sql.ts';

/*
 * SQL for MCP integrations, their workspace access and capabilities, and MCP servers. An MCP
 * server keeps its governance (capability switches, key and user access, tool settings) on its
 * own row as JSON: what the directory hands a gateway is read in one query.
 */

export type McpAuthType = 'none' | 'headers' | 'oauth_client_credentials';
export type McpSyncStatus = 'pending' | 'syncing' | 'synced' | 'failed';
export type McpCapabilityType = 'tool' | 'prompt' | 'resource' | 'resource_template';
export type Access = 'allow' | 'deny';

/** How an integration calls its upstream, as stored: secrets sealed (see mcp-secrets.ts). */
export interface McpStoredConfigurations {
  /** Header name → ciphertext. */
  sealedHeaders?: Record<string, string>;
  /** Lower-case header names copied from the client's request. */
  passthroughHeaders?: string[];
  tokenUrl?: string;
  clientId?: string;
  sealedClientSecret?: string;
  scope?: string;
  /** Credentials whose values come from admin's secret references, resolved when the upstream is called. */
  secretMappings?: StoredSecretMapping[];
}

export interface McpIntegration {
  id: string;
  organisationId: string;
  workspaceId: string | null;
  name: string;
  slug: string;
  description: string | null;
  url: string;
  authType: McpAuthType;
  transport: 'http';
  configurations: McpStoredConfigurations;
  globalWorkspaceAccess: boolean;
  ownerId: string;
  createdAt: Date;
  updatedAt: Date;
  serverName: string | null;
  serverVersion: string | null;
  protocolVersion: string | null;
  capabilityFlags: Record<string, unknown> | null;
  syncStatus: McpSyncStatus;
  lastSyncedAt: Date | null;
  syncError: string | null;
}

export interface McpCapability {
  type: McpCapabilityType;
  name: string;
  enabled: boolean;
  /** What the upstream said of it: title, description, schemas, uri… (snake_case, as answered). */
  definition: Record<string, unknown>;
  createdAt: Date;
  updatedAt: Date;
}

export interface McpCapabilitySwitch {
  type: McpCapabilityType;
  name: string;
  enabled: boolean;
}

export interface McpToolSetting {
  name: string;
  cost?: number | undefined;
  inputGuardrails?: string[] | undefined;
  outputGuardrails?: string[] | undefined;
}

export interface McpKeyAccess {
  apiKeyId: string;
  enabled: boolean;
  allowedTools: string[];
  deniedTools: string[];
}

export interface McpUserAccess {
  userId: string;
  enabled: boolean;
}

export interface McpServer {
  id: string;
  organisationId: string;
  workspaceId: string;
  integrationId: string;
  name: string;
  slug: string;
  description: string | null;
  ownerId: string;
  createdAt: Date;
  updatedAt: Date;
  defaultToolAccess: Access;
  defaultKeyAccess: Access;
  defaultUserAccess: Access;
  inputGuardrails: string[];
  outputGuardrails: string[];
  defaultToolCost: number;
  toolSettings: McpToolSetting[];
  /** Capabilities switched on or off at the server. */
  capabilities: McpCapabilitySwitch[];
  keyAccess: McpKeyAccess[];
  userAccess: McpUserAccess[];
}

export type NewMcpIntegration = Omit<
  McpIntegration,
  | 'id'
  | 'createdAt'
  | 'updatedAt'
  | 'serverName'
  | 'serverVersion'
  | 'protocolVersion'
  | 'capabilityFlags'
  | 'syncStatus'
  | 'lastSyncedAt'
  | 'syncError'
>;

export type McpIntegrationChanges = Partial<
  Pick<McpIntegration, 'name' | 'description' | 'url' | 'authType' | 'configurations'>
>;

export type NewMcpServer = Omit<McpServer, 'id' | 'createdAt' | 'updatedAt'>;

export type McpServerChanges = Partial<
  Pick<
    McpServer,
    | 'name'
    | 'description'
    | 'defaultToolAccess'
    | 'defaultKeyAccess'
    | 'defaultUserAccess'
    | 'inputGuardrails'
    | 'outputGuardrails'
    | 'defaultToolCost'
    | 'toolSettings'
    | 'capabilities'
    | 'keyAccess'
    | 'userAccess'
  >
>;

/** What one sync read from an upstream. */
export interface McpSyncResult {
  serverName: string | null;
  serverVersion: string | null;
  protocolVersion: string | null;
  capabilityFlags: Record<string, unknown> | null;
  capabilities: Array<{ type: McpCapabilityType; name: string; definition: Record<string, unknown> }>;
}

export type McpWorkspaceAccess = IntegrationWorkspaceAccess;

const T = 'control_plane.mcp_integrations';
const S = 'control_plane.mcp_servers';
const W = 'control_plane.mcp_integration_workspaces';

function integrationFrom(row: Row): McpIntegration {
  return {
    id: row.id as string,
    organisationId: row.organisation_id as string,
    workspaceId: (row.workspace_id as string | null) ?? null,
    name: row.name as string,
    slug: row.slug as string,
    description: (row.description as string | null) ?? null,
    url: row.url as string,
    authType: row.auth_type as McpAuthType,
    transport: 'http',
    configurations: (row.configurations as McpStoredConfigurations | null) ?? {},
    globalWorkspaceAccess: row.global_workspace_access as boolean,
    ownerId: row.owner_id as string,
    createdAt: date(row.created_at),
    updatedAt: date(row.last_updated_at),
    serverName: (row.server_name as string | null) ?? null,
    serverVersion: (row.server_version as string | null) ?? null,
    protocolVersion: (row.protocol_version as string | null) ?? null,
    capabilityFlags: (row.capability_flags as Record<string, unknown> | null) ?? null,
    syncStatus: row.sync_status as McpSyncStatus,
    lastSyncedAt: dateOrNull(row.last_synced_at),
    syncError: (row.sync_error as string | null) ?? null,
  };
}

function serverFrom(row: Row): McpServer {
  return {
    id: row.id as string,
    organisationId: row.organisation_id as string,
    workspaceId: row.workspace_id as string,
    integrationId: row.integration_id as string,
    name: row.name as string,
    slug: row.slug as string,
    description: (row.description as string | null) ?? null,
    ownerId: row.owner_id as string,
    createdAt: date(row.created_at),
    updatedAt: date(row.last_updated_at),
    defaultToolAccess: row.default_tool_access as Access,
    defaultKeyAccess: row.default_key_access as Access,
    defaultUserAccess: row.default_user_access as Access,
    inputGuardrails: row.input_guardrails as string[],
    outputGuardrails: row.output_guardrails as string[],
    defaultToolCost: Number(row.default_tool_cost),
    toolSettings: row.tool_settings as McpToolSetting[],
    capabilities: row.capabilities as McpCapabilitySwitch[],
    keyAccess: row.key_access as McpKeyAccess[],
    userAccess: row.user_access as McpUserAccess[],
  };
}

function capabilityFrom(row: Row): McpCapability {
  return {
    type: row.type as McpCapabilityType,
    name: row.name as string,
    enabled: row.enabled as boolean,
    definition: (row.definition as Record<string, unknown>) ?? {},
    createdAt: date(row.created_at),
    updatedAt: date(row.last_updated_at),
  };
}

const SERVER_COLUMNS: Record<keyof McpServerChanges, [string, 'json' | 'plain']> = {
  name: ['name', 'plain'],
  description: ['description', 'plain'],
  defaultToolAccess: ['default_tool_access', 'plain'],
  defaultKeyAccess: ['default_key_access', 'plain'],
  defaultUserAccess: ['default_user_access', 'plain'],
  inputGuardrails: ['input_guardrails', 'json'],
  outputGuardrails: ['output_guardrails', 'json'],
  defaultToolCost: ['default_tool_cost', 'plain'],
  toolSettings: ['tool_settings', 'json'],
  capabilities: ['capabilities', 'json'],
  keyAccess: ['key_access', 'json'],
  userAccess: ['user_access', 'json'],
};

const INTEGRATION_COLUMNS: Record<keyof McpIntegrationChanges, [string, 'json' | 'plain']> = {
  name: ['name', 'plain'],
  description: ['description', 'plain'],
  url: ['url', 'plain'],
  authType: ['auth_type', 'plain'],
  configurations: ['configurations', 'json'],
};

export class McpRepository {
  private readonly workspaces: IntegrationWorkspaces;

  constructor(private readonly manager: EntityManager) {
    this.workspaces = new IntegrationWorkspaces(manager, { integrations: T, workspaces: W });
  }

  /** Null when the slug is taken in the organisation. */
  async insertIntegration(input: NewMcpIntegration): Promise<McpIntegration | null> {
    try {
      const rows: Row[] = await this.manager.query(
        `INSERT INTO ${T} (id, organisation_id, workspace_id, name, slug, description, url, auth_type,
                           transport, configurations, global_workspace_access, owner_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11, $12) RETURNING *`,
        [
          randomUUID(),
          input.organisationId,
          input.workspaceId,
          input.name,
          input.slug,
          input.description,
          input.url,
          input.authType,
          input.transport,
          JSON.stringify(input.configurations),
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

  async findIntegration(organisationId: string, ref: string): Promise<McpIntegration | null> {
    const rows: Row[] = await this.manager.query(
      `SELECT * FROM ${T} WHERE organisation_id = $1 AND ${byRef(ref, 2)}`,
      [organisationId, ref],
    );
    return rows[0] ? integrationFrom(rows[0]) : null;
  }

  async integrationById(id: string): Promise<McpIntegration | null> {
    const rows: Row[] = await this.manager.query(`SELECT * FROM ${T} WHERE id = $1`, [id]);
    return rows[0] ? integrationFrom(rows[0]) : null;
  }

  /**
   * The integrations of an organisation. `workspaceId`: that workspace's own and (unless
   * `type` says `workspace`) the organisation-level ones enabled for it; otherwise all of the
   * organisation's (narrowed by `type`).
   */
  async listIntegrations(
    organisationId: string,
    filter: {
      workspaceId?: string | undefined;
      type?: 'workspace' | 'organisation' | 'all' | undefined;
      search?: string | undefined;
    },
    page: PageQuery,
  ): Promise<[Array<McpIntegration & { workspacesCount: number }>, number]> {
    const { where, params } = integrationListFilter(W, organisationId, filter);
    const total: Row[] = await this.manager.query(
      `SELECT count(*)::int AS n FROM ${T} i WHERE ${where.join(' AND ')}`,
      params,
    );
    const rows: Row[] = await this.manager.query(
      `SELECT i.*, (SELECT count(*)::int FROM ${W} w
                     WHERE w.integration_id = i.id AND w.enabled) AS workspaces_count
         FROM ${T} i WHERE ${where.join(' AND ')}
        ORDER BY i.created_at DESC, i.id LIMIT ${page.limit} OFFSET ${page.offset}`,
      params,
    );
    return [
      rows.map((row) => ({ ...integrationFrom(row), workspacesCount: row.workspaces_count as number })),
      total[0]!.n as number,
    ];
  }

  async updateIntegration(id: string, changes: McpIntegrationChanges): Promise<McpIntegration | null> {
    const params: unknown[] = [id];
    const sets = setClause(changes, INTEGRATION_COLUMNS, params);
    const rows: Row[] = await this.manager.query(
      `UPDATE ${T} SET ${[...sets, 'last_updated_at = now()'].join(', ')} WHERE id = $1 RETURNING *`,
      params,
    );
    const [row] = rowsOf(rows);
    return row ? integrationFrom(row) : null;
  }

  /** Null when a server still uses it. */
  async deleteIntegration(id: string): Promise<boolean | null> {
    return this.manager.transaction(async (manager) => {
      const locked: Row[] = await manager.query(`SELECT id FROM ${T} WHERE id = $1 FOR UPDATE`, [id]);
      if (locked.length === 0) return false;
      const used: Row[] = await manager.query(`SELECT 1 FROM ${S} WHERE integration_id = $1 LIMIT 1`, [id]);
      if (used.length > 0) return null;
      await manager.query(`DELETE FROM ${T} WHERE id = $1`, [id]);
      return true;
    });
  }

  workspaceAccess(integrationId: string): Promise<McpWorkspaceAccess[]> {
    return this.workspaces.list(integrationId);
  }

  /** Whether an organisation-level integration may be used in the workspace (its own setting, else the global one). */
  enabledForWorkspace(integration: McpIntegration, workspaceId: string): Promise<boolean> {
    return this.workspaces.enabledFor(integration, workspaceId);
  }

  /** One transaction: the global switch, the override and every workspace's setting, or none of them. */
  setWorkspaceAccess(integrationId: string, change: WorkspaceAccessChange): Promise<void> {
    return this.workspaces.set(integrationId, change);
  }

  async listCapabilities(
    integrationId: string,
    type: McpCapabilityType | undefined,
    page: { offset: number; limit: number },
  ): Promise<[McpCapability[], number]> {
    const params: unknown[] = [integrationId];
    let where = 'integration_id = $1';
    if (type) {
      params.push(type);
      where += ' AND type = $2';
    }
    const total: Row[] = await this.manager.query(
      `SELECT count(*)::int AS n FROM control_plane.mcp_capabilities WHERE ${where}`,
      params,
    );
    const rows: Row[] = await this.manager.query(
      `SELECT * FROM control_plane.mcp_capabilities WHERE ${where} ORDER BY type, name LIMIT ${page.limit} OFFSET ${page.offset}`,
      params,
    );
    return [rows.map(capabilityFrom), total[0]!.n as number];
  }

  async allCapabilities(integrationId: string): Promise<McpCapability[]> {
    const rows: Row[] = await this.manager.query(
      `SELECT * FROM control_plane.mcp_capabilities WHERE integration_id = $1 ORDER BY type, name`,
      [integrationId],
    );
    return rows.map(capabilityFrom);
  }

  /** Switches capabilities on or off; the names that are not capabilities of the integration are answered. */
  async switchCapabilities(integrationId: string, switches: McpCapabilitySwitch[]): Promise<string[]> {
    return this.manager.transaction(async (manager) => {
      const missing: string[] = [];
      for (const item of switches) {
        const rows: Row[] = await manager.query(
          `UPDATE control_plane.mcp_capabilities SET enabled = $4, last_updated_at = now()
            WHERE integration_id = $1 AND type = $2 AND name = $3 RETURNING name`,
          [integrationId, item.type, item.name, item.enabled],
        );
        if (rowsOf(rows).length === 0) missing.push(`${item.type} '${item.name}'`);
      }
      return missing;
    });
  }

  /**
   * Stores what a sync read: capabilities kept by (type, name) keep their switch, new ones are
   * on, vanished ones go.
   */
  async recordSync(integrationId: string, result: McpSyncResult, nextSyncAt: Date): Promise<void> {
    await this.manager.transaction(async (manager) => {
      await manager.query(
        `UPDATE ${T} SET server_name = $2, server_version = $3, protocol_version = $4,
                capability_flags = $5::jsonb, sync_status = 'synced', last_synced_at = now(),
                sync_error = NULL, sync_claimed_until = NULL, next_sync_at = $6
          WHERE id = $1`,
        [
          integrationId,
          result.serverName,
          result.serverVersion,
          result.protocolVersion,
          result.capabilityFlags === null ? null : JSON.stringify(result.capabilityFlags),
          nextSyncAt,
        ],
      );
      await manager.query(
        `DELETE FROM control_plane.mcp_capabilities
          WHERE integration_id = $1
            AND (type, name) NOT IN (SELECT * FROM unnest($2::text[], $3::text[]))`,
        [integrationId, result.capabilities.map((c) => c.type), result.capabilities.map((c) => c.name)],
      );
      for (const capability of result.capabilities) {
        await manager.query(
          `INSERT INTO control_plane.mcp_capabilities (integration_id, type, name, definition)
           VALUES ($1, $2, $3, $4::jsonb)
           ON CONFLICT (integration_id, type, name)
           DO UPDATE SET definition = $4::jsonb, last_updated_at = now()`,
          [integrationId, capability.type, capability.name, JSON.stringify(capability.definition)],
        );
      }
    });
  }

  async recordSyncFailure(integrationId: string, error: string, nextSyncAt: Date): Promise<void> {
    await this.manager.query(
      `UPDATE ${T} SET sync_status = 'failed', sync_error = $2, sync_claimed_until = NULL, next_sync_at = $3
        WHERE id = $1`,
      [integrationId, error, nextSyncAt],
    );
  }

  /**
   * Claims up to `limit` integrations due for a sync, for `claimMs`: a claim another replica
   * holds is skipped (the row is locked and updated in one statement).
   */
  async claimDue(limit: number, claimMs: number): Promise<string[]> {
    const rows: Row[] = await this.manager.query(
      `UPDATE ${T} SET sync_claimed_until = now() + ($2::int * interval '1 millisecond')
        WHERE id IN (
          SELECT id FROM ${T}
           WHERE next_sync_at <= now() AND (sync_claimed_until IS NULL OR sync_claimed_until < now())
           ORDER BY next_sync_at LIMIT $1 FOR UPDATE SKIP LOCKED)
        RETURNING id`,
      [limit, claimMs],
    );
    return rowsOf(rows).map((row) => row.id as string);
  }

  /** Null when the slug is taken in the organisation. */
  async insertServer(input: NewMcpServer): Promise<McpServer | null> {
    try {
      const rows: Row[] = await this.manager.query(
        `INSERT INTO ${S} (id, organisation_id, workspace_id, integration_id, name, slug, description, owner_id,
                           default_tool_access, default_key_access, default_user_access, input_guardrails,
                           output_guardrails, default_tool_cost, tool_settings, capabilities, key_access, user_access)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::jsonb, $13::jsonb, $14, $15::jsonb, $16::jsonb,
                 $17::jsonb, $18::jsonb) RETURNING *`,
        [
          randomUUID(),
          input.organisationId,
          input.workspaceId,
          input.integrationId,
          input.name,
          input.slug,
          input.description,
          input.ownerId,
          input.defaultToolAccess,
          input.defaultKeyAccess,
          input.defaultUserAccess,
          JSON.stringify(input.inputGuardrails),
          JSON.stringify(input.outputGuardrails),
          input.defaultToolCost,
          JSON.stringify(input.toolSettings),
          JSON.stringify(input.capabilities),
          JSON.stringify(input.keyAccess),
          JSON.stringify(input.userAccess),
        ],
      );
      return serverFrom(rows[0]!);
    } catch (err) {
      if (isUniqueViolation(err)) return null;
      throw err;
    }
  }

  async findServer(organisationId: string, ref: string): Promise<McpServer | null> {
    const rows: Row[] = await this.manager.query(
      `SELECT * FROM ${S} WHERE organisation_id = $1 AND ${byRef(ref, 2)}`,
      [organisationId, ref],
    );
    return rows[0] ? serverFrom(rows[0]) : null;
  }

  async serversOfIntegration(integrationId: string): Promise<McpServer[]> {
    const rows: Row[] = await this.manager.query(`SELECT * FROM ${S} WHERE integration_id = $1`, [
      integrationId,
    ]);
    return rows.map(serverFrom);
  }

  async listServers(
    organisationId: string,
    filter: { workspaceId?: string | undefined; id?: string | undefined; search?: string | undefined },
    page: PageQuery,
  ): Promise<[Array<McpServer & { workspaceName: string; workspaceSlug: string }>, number]> {
    const params: unknown[] = [organisationId];
    const where = ['s.organisation_id = $1'];
    if (filter.workspaceId) {
      params.push(filter.workspaceId);
      where.push(`s.workspace_id = $${params.length}`);
    }
    if (filter.id) {
      params.push(filter.id);
      where.push(isUuid(filter.id) ? `s.id = $${params.length}::uuid` : `s.slug = $${params.length}`);
    }
    if (filter.search) {
      params.push(`%${escapeLike(filter.search)}%`);
      where.push(`(s.name ILIKE $${params.length} OR s.slug ILIKE $${params.length})`);
    }
    const total: Row[] = await this.manager.query(
      `SELECT count(*)::int AS n FROM ${S} s WHERE ${where.join(' AND ')}`,
      params,
    );
    const rows: Row[] = await this.manager.query(
      `SELECT s.*, w.name AS workspace_name, w.slug AS workspace_slug
         FROM ${S} s JOIN control_plane.workspaces w ON w.id = s.workspace_id
        WHERE ${where.join(' AND ')}
        ORDER BY s.created_at DESC, s.id LIMIT ${page.limit} OFFSET ${page.offset}`,
      params,
    );
    return [
      rows.map((row) => ({
        ...serverFrom(row),
        workspaceName: row.workspace_name as string,
        workspaceSlug: row.workspace_slug as string,
      })),
      total[0]!.n as number,
    ];
  }

  /**
   * Servers in keyset order (created_at, id), after `after`: the registry's pages, stable
   * under inserts. `workspaceId` narrows to one workspace.
   */
  async serversAfter(
    organisationId: string,
    filter: { workspaceId?: string | undefined; search?: string | undefined },
    after: { createdAt: string; id: string } | null,
    limit: number,
  ): Promise<Array<McpServer & { createdAtKey: string }>> {
    const params: unknown[] = [organisationId];
    const where = ['s.organisation_id = $1'];
    if (filter.workspaceId) {
      params.push(filter.workspaceId);
      where.push(`s.workspace_id = $${params.length}`);
    }
    if (filter.search) {
      params.push(`%${escapeLike(filter.search)}%`);
      where.push(
        `(s.name ILIKE $${params.length} OR s.slug ILIKE $${params.length} OR s.description ILIKE $${params.length})`,
      );
    }
    if (after) {
      params.push(after.createdAt, after.id);
      where.push(`(s.created_at, s.id) > ($${params.length - 1}::timestamptz, $${params.length}::uuid)`);
    }
    params.push(limit);
    const rows: Row[] = await this.manager.query(
      `SELECT s.*, to_char(s.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at_key
         FROM ${S} s WHERE ${where.join(' AND ')}
        ORDER BY s.created_at, s.id LIMIT $${params.length}`,
      params,
    );
    return rows.map((row) => ({ ...serverFrom(row), createdAtKey: row.created_at_key as string }));
  }

  async updateServer(id: string, changes: McpServerChanges): Promise<McpServer | null> {
    const params: unknown[] = [id];
    const sets = setClause(changes, SERVER_COLUMNS, params);
    const rows: Row[] = await this.manager.query(
      `UPDATE ${S} SET ${[...sets, 'last_updated_at = now()'].join(', ')} WHERE id = $1 RETURNING *`,
      params,
    );
    const [row] = rowsOf(rows);
    return row ? serverFrom(row) : null;
  }

  async deleteServer(id: string): Promise<boolean> {
    const rows: Row[] = await this.manager.query(`DELETE FROM ${S} WHERE id = $1 RETURNING id`, [id]);
    return rowsOf(rows).length > 0;
  }

  /** Workspace row facts the directory needs: whether it is still active. */
  async workspaceActive(workspaceId: string): Promise<boolean> {
    const rows: Row[] = await this.manager.query(
      `SELECT archived_at FROM control_plane.workspaces WHERE id = $1`,
      [workspaceId],
    );
    return rows[0] !== undefined && rows[0].archived_at === null;
  }

  /** Of these API key ids, the ones of the workspace (active or not). */
  async apiKeysOfWorkspace(workspaceId: string, ids: string[]): Promise<Set<string>> {
    const uuids = ids.filter(isUuid);
    if (uuids.length === 0) return new Set();
    const rows: Row[] = await this.manager.query(
      `SELECT id FROM control_plane.api_keys WHERE workspace_id = $1 AND id = ANY($2::uuid[])`,
      [workspaceId, uuids],
    );
    return new Set(rows.map((row) => row.id as string));
  }

  /** Members of the workspace, with their names, optionally searched by name or email. */
  async workspaceUsers(
    workspaceId: string,
    search: string | undefined,
  ): Promise<Array<{ userId: string; firstName: string | null; lastName: string | null }>> {
    const params: unknown[] = [workspaceId];
    let where = 'm.workspace_id = $1';
    if (search) {
      params.push(`%${escapeLike(search)}%`);
      where += ` AND (u.email ILIKE $2 OR u.first_name ILIKE $2 OR u.last_name ILIKE $2)`;
    }
    const rows: Row[] = await this.manager.query(
      `SELECT u.id, u.first_name, u.last_name FROM control_plane.workspace_members m
         JOIN control_plane.users u ON u.id = m.user_id WHERE ${where} ORDER BY u.email, u.id LIMIT 10000`,
      params,
    );
    return rows.map((row) => ({
      userId: row.id as string,
      firstName: (row.first_name as string | null) ?? null,
      lastName: (row.last_name as string | null) ?? null,
    }));
  }
}
