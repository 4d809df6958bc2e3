import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { isUniqueViolation } from '@switchyard/adapters';
import { NotFound, type PageQuery } from '@switchyard/core';
import { isUuid } from '../domain/ids.ts';
import { date, escapeLike, rowsOf, type Row } from './sql.ts';

/*
 * SQL for prompts and prompt partials (one table, `kind` tells them apart), their versions
 * and their shares. A version is never changed but for its label and description; a new
 * version number is taken with the prompt row locked, so concurrent writes never share one.
 */

export type PromptKind = 'prompt' | 'partial';

export interface Prompt {
  id: string;
  organisationId: string;
  workspaceId: string;
  kind: PromptKind;
  name: string;
  slug: string;
  status: 'active' | 'archived';
  defaultVersion: number;
  ownerId: string;
  createdAt: Date;
  updatedAt: Date;
}

/** What a version holds: its template and, for prompts, what the completion runs with. */
export interface PromptContent {
  template: string;
  model: string | null;
  virtualKey: string | null;
  parameters: Record<string, unknown>;
  functions: unknown[] | null;
  tools: unknown[] | null;
  toolChoice: unknown;
  templateMetadata: Record<string, unknown> | null;
}

export interface PromptVersion extends PromptContent {
  id: string;
  promptId: string;
  version: number;
  description: string | null;
  labelId: string | null;
  createdAt: Date;
}

export interface WorkspaceRef {
  id: string;
  slug: string;
}

const P = 'control_plane.prompts';
const V = 'control_plane.prompt_versions';
const S = 'control_plane.prompt_shares';
const W = 'control_plane.workspaces';

function promptFrom(row: Row): Prompt {
  return {
    id: row.id as string,
    organisationId: row.organisation_id as string,
    workspaceId: row.workspace_id as string,
    kind: row.kind as PromptKind,
    name: row.name as string,
    slug: row.slug as string,
    status: row.status as 'active' | 'archived',
    defaultVersion: Number(row.default_version),
    ownerId: row.owner_id as string,
    createdAt: date(row.created_at),
    updatedAt: date(row.last_updated_at),
  };
}

function versionFrom(row: Row): PromptVersion {
  return {
    id: row.id as string,
    promptId: row.prompt_id as string,
    version: Number(row.version),
    template: row.template as string,
    model: (row.model as string | null) ?? null,
    virtualKey: (row.virtual_key as string | null) ?? null,
    parameters: (row.parameters as Record<string, unknown> | null) ?? {},
    functions: (row.functions as unknown[] | null) ?? null,
    tools: (row.tools as unknown[] | null) ?? null,
    toolChoice: row.tool_choice ?? null,
    templateMetadata: (row.template_metadata as Record<string, unknown> | null) ?? null,
    description: (row.description as string | null) ?? null,
    labelId: (row.label_id as string | null) ?? null,
    createdAt: date(row.created_at),
  };
}

const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));

async function insertVersion(
  manager: EntityManager,
  promptId: string,
  version: number,
  content: PromptContent,
  description: string | null,
): Promise<PromptVersion> {
  const rows: Row[] = await manager.query(
    `INSERT INTO ${V} (id, prompt_id, version, template, model, virtual_key, parameters, functions, tools,
                       tool_choice, template_metadata, description)
     VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9::jsonb, $10::jsonb, $11::jsonb, $12) RETURNING *`,
    [
      randomUUID(),
      promptId,
      version,
      content.template,
      content.model,
      content.virtualKey,
      JSON.stringify(content.parameters),
      json(content.functions),
      json(content.tools),
      json(content.toolChoice),
      json(content.templateMetadata),
      description,
    ],
  );
  return versionFrom(rows[0]!);
}

export class PromptRepository {
  constructor(private readonly manager: EntityManager) {}

  /** A live prompt (or partial) of the organisation by id or slug. */
  async find(organisationId: string, kind: PromptKind, ref: string): Promise<Prompt | null> {
    const rows: Row[] = await this.manager.query(
      `SELECT * FROM ${P} WHERE organisation_id = $1 AND kind = $2 AND status = 'active' AND ${
        isUuid(ref) ? 'id = $3::uuid' : 'slug = $3'
      }`,
      [organisationId, kind, ref],
    );
    return rows[0] ? promptFrom(rows[0]) : null;
  }

  /** Null when the slug is taken (or the workspace is archived meanwhile). */
  async create(
    input: Pick<Prompt, 'organisationId' | 'workspaceId' | 'kind' | 'name' | 'slug' | 'ownerId'>,
    content: PromptContent,
    description: string | null,
  ): Promise<{ prompt: Prompt; version: PromptVersion } | null> {
    try {
      return await this.manager.transaction(async (manager) => {
        // Shared with the workspace delete's lock: a prompt cannot join a workspace being archived.
        const live: Row[] = await manager.query(
          `SELECT id FROM ${W} WHERE id = $1 AND archived_at IS NULL FOR SHARE`,
          [input.workspaceId],
        );
        if (live.length === 0) return null;
        const rows: Row[] = await manager.query(
          `INSERT INTO ${P} (id, organisation_id, workspace_id, kind, name, slug, owner_id)
           VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
          [
            randomUUID(),
            input.organisationId,
            input.workspaceId,
            input.kind,
            input.name,
            input.slug,
            input.ownerId,
          ],
        );
        const prompt = promptFrom(rows[0]!);
        return { prompt, version: await insertVersion(manager, prompt.id, 1, content, description) };
      });
    } catch (err) {
      if (isUniqueViolation(err)) return null;
      throw err;
    }
  }

  /**
   * Renames and/or adds a version (numbered after the newest, with the row locked). Null when
   * the prompt is gone.
   */
  async update(
    id: string,
    changes: { name?: string | undefined },
    content: PromptContent | undefined,
    description: string | null,
  ): Promise<{ prompt: Prompt; version: PromptVersion | null } | null> {
    return this.manager.transaction(async (manager) => {
      const locked: Row[] = await manager.query(
        `SELECT * FROM ${P} WHERE id = $1 AND status = 'active' FOR UPDATE`,
        [id],
      );
      if (locked.length === 0) return null;
      let version: PromptVersion | null = null;
      if (content) {
        const [{ n }] = (await manager.query(
          `SELECT COALESCE(max(version), 0)::int AS n FROM ${V} WHERE prompt_id = $1`,
          [id],
        )) as [{ n: number }];
        version = await insertVersion(manager, id, n + 1, content, description);
      }
      const rows = rowsOf(
        await manager.query(
          `UPDATE ${P} SET name = COALESCE($2, name), last_updated_at = now() WHERE id = $1 RETURNING *`,
          [id, changes.name ?? null],
        ),
      );
      return { prompt: promptFrom(rows[0]!), version };
    });
  }

  async versions(promptId: string): Promise<PromptVersion[]> {
    const rows: Row[] = await this.manager.query(
      `SELECT * FROM ${V} WHERE prompt_id = $1 ORDER BY version DESC`,
      [promptId],
    );
    return rows.map(versionFrom);
  }

  /** A version by number, `latest`, or id. */
  async version(promptId: string, ref: number | 'latest' | string): Promise<PromptVersion | null> {
    let rows: Row[];
    if (ref === 'latest') {
      rows = await this.manager.query(
        `SELECT * FROM ${V} WHERE prompt_id = $1 ORDER BY version DESC LIMIT 1`,
        [promptId],
      );
    } else if (typeof ref === 'number') {
      rows = await this.manager.query(`SELECT * FROM ${V} WHERE prompt_id = $1 AND version = $2`, [
        promptId,
        ref,
      ]);
    } else if (isUuid(ref)) {
      rows = await this.manager.query(`SELECT * FROM ${V} WHERE prompt_id = $1 AND id = $2::uuid`, [
        promptId,
        ref,
      ]);
    } else {
      return null;
    }
    return rows[0] ? versionFrom(rows[0]) : null;
  }

  /** The default versions of several prompts, by prompt id. */
  async defaultVersions(promptIds: readonly string[]): Promise<Map<string, PromptVersion>> {
    if (promptIds.length === 0) return new Map();
    const rows: Row[] = await this.manager.query(
      `SELECT v.* FROM ${V} v JOIN ${P} p ON p.id = v.prompt_id AND v.version = p.default_version
        WHERE p.id = ANY($1::uuid[])`,
      [promptIds],
    );
    return new Map(rows.map((row) => [row.prompt_id as string, versionFrom(row)]));
  }

  async labelVersion(
    versionId: string,
    changes: { labelId?: string | null | undefined; description?: string | null | undefined },
  ): Promise<PromptVersion | null> {
    const rows = rowsOf(
      await this.manager.query(
        `UPDATE ${V} SET label_id = CASE WHEN $2 THEN $3::uuid ELSE label_id END,
                         description = CASE WHEN $4 THEN $5 ELSE description END
          WHERE id = $1 RETURNING *`,
        [
          versionId,
          changes.labelId !== undefined,
          changes.labelId ?? null,
          changes.description !== undefined,
          changes.description ?? null,
        ],
      ),
    );
    return rows[0] ? versionFrom(rows[0]) : null;
  }

  /** False when the prompt is gone or has no such version. */
  async makeDefault(id: string, version: number): Promise<Prompt | null> {
    const rows = rowsOf(
      await this.manager.query(
        `UPDATE ${P} SET default_version = $2, last_updated_at = now()
          WHERE id = $1 AND status = 'active'
            AND EXISTS (SELECT 1 FROM ${V} WHERE prompt_id = $1 AND version = $2)
          RETURNING *`,
        [id, version],
      ),
    );
    return rows[0] ? promptFrom(rows[0]) : null;
  }

  /**
   * Archives a live prompt unless it is shared (answers the workspaces it is shared with) or,
   * for a partial, `blockers` names what includes it. Runs with the row locked, so a share
   * made meanwhile is seen.
   */
  async archive(
    id: string,
    blockers: (manager: EntityManager) => Promise<string[]>,
  ): Promise<{ archived: Prompt } | { sharedWith: WorkspaceRef[] } | { includedBy: string[] } | null> {
    return this.manager.transaction(async (manager) => {
      const locked: Row[] = await manager.query(
        `SELECT * FROM ${P} WHERE id = $1 AND status = 'active' FOR UPDATE`,
        [id],
      );
      if (locked.length === 0) return null;
      const sharedWith = await this.sharesOf(id, manager);
      if (sharedWith.length > 0) return { sharedWith };
      const includedBy = await blockers(manager);
      if (includedBy.length > 0) return { includedBy };
      const rows = rowsOf(
        await manager.query(
          `UPDATE ${P} SET status = 'archived', last_updated_at = now() WHERE id = $1 RETURNING *`,
          [id],
        ),
      );
      return { archived: promptFrom(rows[0]!) };
    });
  }

  /**
   * The live prompts and partials (of `kinds`) of the organisation whose default version's
   * template mentions `needle` (a cheap pre-filter; the caller parses the templates).
   */
  async defaultTemplatesMentioning(
    organisationId: string,
    needle: string,
    manager: EntityManager = this.manager,
  ): Promise<Array<{ prompt: Prompt; template: string }>> {
    const rows: Row[] = await manager.query(
      `SELECT p.*, v.template AS default_template FROM ${P} p
         JOIN ${V} v ON v.prompt_id = p.id AND v.version = p.default_version
        WHERE p.organisation_id = $1 AND p.status = 'active' AND v.template LIKE $2`,
      [organisationId, `%${escapeLike(needle)}%`],
    );
    return rows.map((row) => ({ prompt: promptFrom(row), template: row.default_template as string }));
  }

  /**
   * Prompts of one kind a workspace can see, or the organisation's (no workspace). `shared`:
   * only those of other workspaces shared with `workspaceId`.
   */
  async list(
    organisationId: string,
    kind: PromptKind,
    filter: { workspaceId?: string | undefined; shared?: boolean; search?: string | undefined },
    page: PageQuery,
  ): Promise<[Prompt[], number]> {
    const params: unknown[] = [organisationId, kind];
    const where = [`p.organisation_id = $1`, `p.kind = $2`, `p.status = 'active'`];
    if (filter.workspaceId) {
      params.push(filter.workspaceId);
      where.push(
        filter.shared
          ? `EXISTS (SELECT 1 FROM ${S} s WHERE s.prompt_id = p.id AND s.workspace_id = $${params.length})`
          : `p.workspace_id = $${params.length}`,
      );
    }
    if (filter.search) {
      params.push(`%${escapeLike(filter.search)}%`);
      where.push(`(p.name ILIKE $${params.length} OR p.slug ILIKE $${params.length})`);
    }
    const total: Row[] = await this.manager.query(
      `SELECT count(*)::int AS n FROM ${P} p WHERE ${where.join(' AND ')}`,
      params,
    );
    const rows: Row[] = await this.manager.query(
      `SELECT p.* FROM ${P} p WHERE ${where.join(' AND ')}
        ORDER BY p.created_at DESC, p.id LIMIT ${page.limit} OFFSET ${page.offset}`,
      params,
    );
    return [rows.map(promptFrom), total[0]!.n as number];
  }

  /** Live partials a workspace can use: its own and those shared with it. */
  async partialsVisibleTo(workspaceId: string): Promise<Prompt[]> {
    const rows: Row[] = await this.manager.query(
      `SELECT p.* FROM ${P} p
        WHERE p.kind = 'partial' AND p.status = 'active'
          AND (p.workspace_id = $1 OR EXISTS (SELECT 1 FROM ${S} s WHERE s.prompt_id = p.id AND s.workspace_id = $1))`,
      [workspaceId],
    );
    return rows.map(promptFrom);
  }

  async isSharedWith(promptId: string, workspaceId: string): Promise<boolean> {
    const rows: Row[] = await this.manager.query(
      `SELECT 1 FROM ${S} WHERE prompt_id = $1 AND workspace_id = $2`,
      [promptId, workspaceId],
    );
    return rows.length > 0;
  }

  async sharesOf(promptId: string, manager: EntityManager = this.manager): Promise<WorkspaceRef[]> {
    const rows: Row[] = await manager.query(
      `SELECT w.id, w.slug FROM ${S} s JOIN ${W} w ON w.id = s.workspace_id
        WHERE s.prompt_id = $1 ORDER BY w.slug`,
      [promptId],
    );
    return rows.map((row) => ({ id: row.id as string, slug: row.slug as string }));
  }

  /** The shares of several prompts, by prompt id. */
  async sharesOfMany(promptIds: readonly string[]): Promise<Map<string, WorkspaceRef[]>> {
    const found = new Map<string, WorkspaceRef[]>();
    if (promptIds.length === 0) return found;
    const rows: Row[] = await this.manager.query(
      `SELECT s.prompt_id, w.id, w.slug FROM ${S} s JOIN ${W} w ON w.id = s.workspace_id
        WHERE s.prompt_id = ANY($1::uuid[]) ORDER BY w.slug`,
      [promptIds],
    );
    for (const row of rows) {
      const list = found.get(row.prompt_id as string) ?? [];
      list.push({ id: row.id as string, slug: row.slug as string });
      found.set(row.prompt_id as string, list);
    }
    return found;
  }

  async workspaceSlugs(ids: readonly string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    const rows: Row[] = await this.manager.query(`SELECT id, slug FROM ${W} WHERE id = ANY($1::uuid[])`, [
      [...new Set(ids)],
    ]);
    return new Map(rows.map((row) => [row.id as string, row.slug as string]));
  }

  /**
   * Changes a live prompt's shares: `add` joins them, `remove` leaves them, `replace` first
   * drops every share. With the owning workspace's row locked (shared with the workspace
   * delete's lock) and the target workspaces' too, so neither a deleted owner nor a deleted
   * target can gain a share. Null when the prompt or its workspace is gone.
   */
  async changeShares(
    promptId: string,
    change: { add?: readonly string[]; remove?: readonly string[]; replace?: boolean },
  ): Promise<WorkspaceRef[] | null> {
    return this.manager.transaction(async (manager) => {
      const prompts: Row[] = await manager.query(
        `SELECT * FROM ${P} WHERE id = $1 AND status = 'active' FOR UPDATE`,
        [promptId],
      );
      if (prompts.length === 0) return null;
      const add = [...new Set(change.add ?? [])];
      const locked: Row[] = await manager.query(
        `SELECT id FROM ${W} WHERE id = ANY($1::uuid[]) AND archived_at IS NULL ORDER BY id FOR SHARE`,
        [[prompts[0]!.workspace_id as string, ...add]],
      );
      const live = new Set(locked.map((row) => row.id as string));
      if (!live.has(prompts[0]!.workspace_id as string)) return null;
      if (change.replace) await manager.query(`DELETE FROM ${S} WHERE prompt_id = $1`, [promptId]);
      if (change.remove?.length) {
        await manager.query(`DELETE FROM ${S} WHERE prompt_id = $1 AND workspace_id = ANY($2::uuid[])`, [
          promptId,
          change.remove,
        ]);
      }
      const archived = add.filter((workspaceId) => !live.has(workspaceId));
      if (archived.length > 0) {
        // Deleted since it was looked up: nothing of this change is kept.
        throw new NotFound(`Workspace '${archived[0]}' not found.`, { param: 'workspace_ids' });
      }
      for (const workspaceId of add) {
        await manager.query(
          `INSERT INTO ${S} (prompt_id, workspace_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
          [promptId, workspaceId],
        );
      }
      await manager.query(`UPDATE ${P} SET last_updated_at = now() WHERE id = $1`, [promptId]);
      return this.sharesOf(promptId, manager);
    });
  }
}

/**
 * For the workspace delete, inside its transaction (the workspace row locked): the live
 * prompts and partials the workspace owns that are shared with other workspaces.
 */
export async function sharedPromptsOf(
  manager: EntityManager,
  workspaceId: string,
): Promise<Array<{ kind: PromptKind; slug: string }>> {
  const rows: Row[] = await manager.query(
    `SELECT DISTINCT p.kind, p.slug FROM ${P} p JOIN ${S} s ON s.prompt_id = p.id
      WHERE p.workspace_id = $1 AND p.status = 'active' AND s.workspace_id <> $1
      ORDER BY p.kind DESC, p.slug`,
    [workspaceId],
  );
  return rows.map((row) => ({ kind: row.kind as PromptKind, slug: row.slug as string }));
}

/**
 * For the workspace delete, inside its transaction: archives the workspace's live prompts and
 * partials and removes every share to it. Answers what changed, for the caches to drop.
 */
export async function archivePromptsOf(manager: EntityManager, workspaceId: string): Promise<Prompt[]> {
  const archived = rowsOf(
    await manager.query(
      `UPDATE ${P} SET status = 'archived', last_updated_at = now()
        WHERE workspace_id = $1 AND status = 'active' RETURNING *`,
      [workspaceId],
    ),
  ).map(promptFrom);
  const unshared = rowsOf(
    await manager.query(
      `DELETE FROM ${S} s USING ${P} p WHERE s.workspace_id = $1 AND p.id = s.prompt_id RETURNING p.*`,
      [workspaceId],
    ),
  );
  return [...archived, ...unshared.map(promptFrom)];
}
