import type { EntityManager } from 'typeorm';
import { Conflict } from '@switchyard/core';
import { isUniqueViolation } from '@switchyard/adapters';
import { SecretReferenceEntity, type SecretManagerType, type SecretReference } from './entities.ts';

/**
 * One of an integration's secret mappings, as stored in the integration's `secret_mappings`
 * column: the reference by id, whatever the body named it by.
 */
export interface StoredSecretMapping {
  target_field: string;
  secret_reference_id: string;
  secret_key: string | null;
  value_format: 'string' | 'json' | null;
  /** With value_format json: an RFC 6901 pointer into the parsed value; absent in older mappings. */
  json_pointer?: string | null;
}

/** What an update may change; `encryptedValue` (an internal secret) only when given. */
export type SecretReferenceChanges = Partial<Pick<SecretReference, 'encryptedValue'>> &
  Pick<
    SecretReference,
    | 'name'
    | 'description'
    | 'authConfig'
    | 'secretPath'
    | 'secretKey'
    | 'allowAllWorkspaces'
    | 'allowedWorkspaces'
    | 'tags'
  >;

export interface SecretReferenceFilter {
  managerType?: SecretManagerType | undefined;
  /** References holding every one of these tags. */
  tags?: Record<string, string> | undefined;
  /** Part of the name, any case. */
  search?: string | undefined;
}

/** A live integration that maps a reference. */
export interface MappingIntegration {
  id: string;
  slug: string;
  organisationId: string;
  workspaceId: string | null;
}

function conflictOf(err: unknown, slug: string): unknown {
  if (!isUniqueViolation(err)) return err;
  return new Conflict(`A secret reference with slug "${slug}" already exists.`, { param: 'slug' });
}

export class SecretReferenceRepository {
  constructor(private readonly manager: EntityManager) {}

  async insert(reference: SecretReference): Promise<SecretReference> {
    try {
      await this.manager.getRepository(SecretReferenceEntity).insert(reference);
    } catch (err) {
      throw conflictOf(err, reference.slug);
    }
    return reference;
  }

  /** The organisation's reference with this id or slug. */
  find(organisationId: string, idOrSlug: string, isId: boolean): Promise<SecretReference | null> {
    const repo = this.manager.getRepository(SecretReferenceEntity);
    return isId
      ? repo.findOneBy({ organisationId, id: idOrSlug })
      : repo.findOneBy({ organisationId, slug: idOrSlug });
  }

  /** The organisation's references with these ids, by id. */
  async findByIds(organisationId: string, ids: readonly string[]): Promise<Map<string, SecretReference>> {
    if (ids.length === 0) return new Map();
    const found = await this.manager
      .getRepository(SecretReferenceEntity)
      .createQueryBuilder('r')
      .where('r.organisation_id = :organisationId AND r.id = ANY(:ids::uuid[])', { organisationId, ids })
      .getMany();
    return new Map(found.map((reference) => [reference.id, reference]));
  }

  list(
    organisationId: string,
    filter: SecretReferenceFilter,
    page: { offset: number; limit: number },
  ): Promise<[SecretReference[], number]> {
    const query = this.manager
      .getRepository(SecretReferenceEntity)
      .createQueryBuilder('r')
      .where('r.organisation_id = :organisationId', { organisationId });
    if (filter.managerType)
      query.andWhere('r.manager_type = :managerType', { managerType: filter.managerType });
    if (filter.tags) query.andWhere('r.tags @> :tags::jsonb', { tags: JSON.stringify(filter.tags) });
    if (filter.search) {
      const pattern = `%${filter.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      query.andWhere('r.name ILIKE :pattern', { pattern });
    }
    return query
      .orderBy('r.created_at', 'ASC')
      .addOrderBy('r.id', 'ASC')
      .skip(page.offset)
      .take(page.limit)
      .getManyAndCount();
  }

  /** Null when the reference was deleted meanwhile. */
  async update(id: string, changes: SecretReferenceChanges, now: Date): Promise<SecretReference | null> {
    const repo = this.manager.getRepository(SecretReferenceEntity);
    const { affected } = await repo.update({ id }, { ...changes, updatedAt: now });
    if (!affected) return null;
    return repo.findOneBy({ id });
  }

  /**
   * Deletes the reference unless a live integration maps it, in one statement; false when it
   * was not deleted (mapped, or gone already).
   */
  async deleteUnmapped(id: string): Promise<boolean> {
    const [, affected] = (await this.manager.query(
      `DELETE FROM admin.secret_references r
        WHERE r.id = $1
          AND NOT EXISTS (
            SELECT 1 FROM admin.integrations i
             WHERE i.status = 'active'
               AND i.secret_mappings @> jsonb_build_array(jsonb_build_object('secret_reference_id', $1::text)))`,
      [id],
    )) as [unknown, number];
    return affected > 0;
  }

  /** The live integrations that map the reference, oldest first. */
  async integrationsMapping(referenceId: string): Promise<MappingIntegration[]> {
    const rows = (await this.manager.query(
      `SELECT id, slug, organisation_id, workspace_id FROM admin.integrations
        WHERE status = 'active'
          AND secret_mappings @> jsonb_build_array(jsonb_build_object('secret_reference_id', $1::text))
        ORDER BY created_at, id`,
      [referenceId],
    )) as Array<{ id: string; slug: string; organisation_id: string; workspace_id: string | null }>;
    return rows.map((row) => ({
      id: row.id,
      slug: row.slug,
      organisationId: row.organisation_id,
      workspaceId: row.workspace_id,
    }));
  }

  /** The integration's secret mappings (none: empty). */
  async mappingsOf(integrationId: string): Promise<StoredSecretMapping[]> {
    const [row] = (await this.manager.query(`SELECT secret_mappings FROM admin.integrations WHERE id = $1`, [
      integrationId,
    ])) as Array<{ secret_mappings: StoredSecretMapping[] }>;
    return row?.secret_mappings ?? [];
  }

  /** Replaces the integration's secret mappings in one statement. */
  async setMappings(integrationId: string, mappings: StoredSecretMapping[]): Promise<void> {
    await this.manager.query(
      `UPDATE admin.integrations SET secret_mappings = $2::jsonb, updated_at = now() WHERE id = $1`,
      [integrationId, JSON.stringify(mappings)],
    );
  }
}
