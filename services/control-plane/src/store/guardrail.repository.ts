import { randomUUID } from 'node:crypto';
import { IsNull, type EntityManager, type FindOptionsWhere, type QueryDeepPartialEntity } from 'typeorm';
import type { GuardrailActions, GuardrailCheck } from '@switchyard/guardrails';
import { isUniqueViolation } from '@switchyard/adapters';
import {
  GuardrailEntity,
  GuardrailVersionEntity,
  type Guardrail,
  type GuardrailStatus,
  type GuardrailVersion,
} from './guardrail.entities.ts';
import { isUuid } from '../domain/ids.ts';
import type { StoredSecretMapping } from '../domain/secret-mapping.schemas.ts';

/*
 * TypeORM (entity repositories) for guardrails and their versions; SQL for the next version
 * number (max over the versions), read while the guardrail's row is locked.
 */

export interface NewGuardrail {
  organisationId: string;
  workspaceId: string | null;
  name: string;
  slug: string;
  checks: GuardrailCheck[];
  actions: GuardrailActions;
  /** None when absent. */
  secretMappings?: StoredSecretMapping[];
  /** Who writes: becomes the owner, the last updater and the version's author. */
  actorId: string;
}

export interface GuardrailChanges {
  name?: string | undefined;
  checks?: GuardrailCheck[] | undefined;
  actions?: GuardrailActions | undefined;
  secretMappings?: StoredSecretMapping[] | undefined;
  status?: GuardrailStatus | undefined;
}

export interface GuardrailWrite {
  guardrail: Guardrail;
  /** The version the guardrail now stands at: a new one when its checks or actions changed. */
  version: GuardrailVersion | null;
}

/** Which active guardrails a list holds: of one workspace, and with `organisationLevel` also the organisation's own. */
export interface GuardrailFilter {
  workspaceId?: string | undefined;
  organisationLevel?: boolean | undefined;
}

/** TypeORM's partial-row type cannot follow the `unknown` parameters a check holds. */
const row = <T>(entity: T) => entity as QueryDeepPartialEntity<T>;

/** Guardrail definitions and their versions. */
export class GuardrailRepository {
  constructor(private readonly manager: EntityManager) {}

  /** A guardrail and its first version, in one transaction; null when the slug is taken in the organisation. */
  async insert(input: NewGuardrail): Promise<{ guardrail: Guardrail; version: GuardrailVersion } | null> {
    const now = new Date();
    const { actorId, ...fields } = input;
    const version: GuardrailVersion = {
      id: randomUUID(),
      guardrailId: randomUUID(),
      version: 1,
      checks: input.checks,
      actions: input.actions,
      createdAt: now,
      createdBy: actorId,
    };
    const guardrail: Guardrail = {
      ...fields,
      secretMappings: fields.secretMappings ?? [],
      id: version.guardrailId,
      status: 'active',
      ownerId: actorId,
      updatedBy: actorId,
      createdAt: now,
      updatedAt: now,
      currentVersionId: version.id,
    };
    try {
      await this.manager.transaction(async (manager) => {
        await manager.getRepository(GuardrailEntity).insert(row(guardrail));
        await manager.getRepository(GuardrailVersionEntity).insert(row(version));
      });
    } catch (err) {
      if (isUniqueViolation(err)) return null;
      throw err;
    }
    return { guardrail, version };
  }

  /** By id or slug within the organisation, archived ones included. */
  async find(organisationId: string, idOrSlug: string): Promise<Guardrail | null> {
    const repo = this.manager.getRepository(GuardrailEntity);
    return isUuid(idOrSlug)
      ? repo.findOneBy({ organisationId, id: idOrSlug })
      : repo.findOneBy({ organisationId, slug: idOrSlug });
  }

  /** Active guardrails of the organisation, oldest first. */
  async listActive(
    organisationId: string,
    filter: GuardrailFilter,
    page: { offset: number; limit: number },
  ): Promise<[Guardrail[], number]> {
    const base = { organisationId, status: 'active' } as const;
    let where: FindOptionsWhere<Guardrail> | Array<FindOptionsWhere<Guardrail>> = base;
    if (filter.workspaceId !== undefined) {
      where = [{ ...base, workspaceId: filter.workspaceId }];
      if (filter.organisationLevel) where.push({ ...base, workspaceId: IsNull() });
    }
    return this.manager.getRepository(GuardrailEntity).findAndCount({
      where,
      order: { createdAt: 'ASC', id: 'ASC' },
      skip: page.offset,
      take: page.limit,
    });
  }

  /** Every active guardrail of the organisation, for the gateways that run them (at most `limit`). */
  async allActive(organisationId: string, limit: number): Promise<Guardrail[]> {
    return this.manager.getRepository(GuardrailEntity).find({
      where: { organisationId, status: 'active' },
      order: { createdAt: 'ASC', id: 'ASC' },
      take: limit,
    });
  }

  /**
   * Applies the changes to the active guardrail in one transaction, its row locked until the
   * commit, so concurrent updates apply one after the other and number their versions in
   * turn. A version is written only when the checks or actions differ from what they were.
   * Null when the guardrail is gone or archived by then.
   */
  async update(id: string, changes: GuardrailChanges, actorId: string): Promise<GuardrailWrite | null> {
    return this.manager.transaction(async (manager) => {
      const current = await manager
        .getRepository(GuardrailEntity)
        .findOne({ where: { id, status: 'active' }, lock: { mode: 'pessimistic_write' } });
      if (!current) return null;
      const now = new Date();
      const checks = changes.checks ?? current.checks;
      const actions = changes.actions ?? current.actions;
      let version: GuardrailVersion | null = null;
      if (
        canonical(checks) !== canonical(current.checks) ||
        canonical(actions) !== canonical(current.actions)
      ) {
        const [{ last }] = (await manager.query(
          `SELECT coalesce(max(version), 0)::int AS last FROM control_plane.guardrail_versions WHERE guardrail_id = $1`,
          [id],
        )) as [{ last: number }];
        version = {
          id: randomUUID(),
          guardrailId: id,
          version: last + 1,
          checks,
          actions,
          createdAt: now,
          createdBy: actorId,
        };
        await manager.getRepository(GuardrailVersionEntity).insert(row(version));
      }
      const guardrail: Guardrail = {
        ...current,
        name: changes.name ?? current.name,
        status: changes.status ?? current.status,
        checks,
        actions,
        secretMappings: changes.secretMappings ?? current.secretMappings,
        updatedBy: actorId,
        updatedAt: now,
        currentVersionId: version?.id ?? current.currentVersionId,
      };
      await manager.getRepository(GuardrailEntity).update(
        { id },
        row({
          name: guardrail.name,
          status: guardrail.status,
          checks: guardrail.checks,
          actions: guardrail.actions,
          secretMappings: guardrail.secretMappings,
          updatedBy: guardrail.updatedBy,
          updatedAt: guardrail.updatedAt,
          currentVersionId: guardrail.currentVersionId,
        }),
      );
      return { guardrail, version };
    });
  }

  /** Newest first. */
  async listVersions(
    guardrailId: string,
    page: { offset: number; limit: number },
  ): Promise<[GuardrailVersion[], number]> {
    return this.manager.getRepository(GuardrailVersionEntity).findAndCount({
      where: { guardrailId },
      order: { version: 'DESC' },
      skip: page.offset,
      take: page.limit,
    });
  }
}

/** JSON text with every object's keys in order: Postgres hands jsonb objects back in its own key order. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, node: unknown) =>
    node !== null && typeof node === 'object' && !Array.isArray(node)
      ? Object.fromEntries(Object.entries(node).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : node,
  );
}
