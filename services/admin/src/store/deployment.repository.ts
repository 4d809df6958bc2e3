import { In, type EntityManager, type QueryDeepPartialEntity } from 'typeorm';
import { Conflict } from '@switchyard/core';
import { isUniqueViolation } from '@switchyard/adapters';
import {
  DeploymentEntity,
  DeploymentInstanceEntity,
  type Deployment,
  type DeploymentInstance,
  type DeploymentStatus,
  type DeploymentType,
} from './entities.ts';

/** What a create stores; the rest is set here. */
export type NewDeployment = Omit<
  Deployment,
  'status' | 'settingsRevision' | 'lastResyncedAt' | 'createdAt' | 'updatedAt'
>;

/** What an update may change. */
export type DeploymentChanges = Pick<
  Deployment,
  | 'name'
  | 'slug'
  | 'type'
  | 'isDefault'
  | 'tags'
  | 'authSettings'
  | 'deploymentConfig'
  | 'workspaces'
  | 'credentialsUsername'
  | 'encryptedCredentialsPassword'
  | 'clientAuth'
>;

export interface DeploymentFilter {
  status: DeploymentStatus;
  type?: DeploymentType | undefined;
}

/** Free-form JSON columns (deployment_config) are written as given. */
const row = <T>(entity: T) => entity as QueryDeepPartialEntity<T>;

/** A unique index refused the write: which rule it breaks. */
function conflictOf(err: unknown, slug: string): unknown {
  if (!isUniqueViolation(err)) return err;
  const constraint = (err as { driverError?: { constraint?: string } }).driverError?.constraint;
  if (constraint === 'deployments_one_default') {
    return new Conflict('Another deployment was made the default at the same time; try again.', {
      param: 'is_default',
    });
  }
  return new Conflict(`A deployment with slug "${slug}" already exists.`, { param: 'slug' });
}

export class DeploymentRepository {
  constructor(private readonly manager: EntityManager) {}

  /** A new default takes the place of the organisation's previous one, in the same transaction. */
  async insert(input: NewDeployment, now: Date): Promise<Deployment> {
    const deployment: Deployment = {
      ...input,
      status: 'active',
      settingsRevision: 1,
      lastResyncedAt: null,
      createdAt: now,
      updatedAt: now,
    };
    try {
      await this.manager.transaction(async (tx) => {
        if (deployment.isDefault) await this.clearDefault(tx, deployment.organisationId, deployment.id, now);
        await tx.getRepository(DeploymentEntity).insert(row(deployment));
      });
    } catch (err) {
      throw conflictOf(err, input.slug);
    }
    return deployment;
  }

  /** The organisation's deployment with this id (archived too), or its live one with this slug. */
  async find(organisationId: string, idOrSlug: string, isId: boolean): Promise<Deployment | null> {
    const repo = this.manager.getRepository(DeploymentEntity);
    return isId
      ? repo.findOneBy({ organisationId, id: idOrSlug })
      : repo.findOneBy({ organisationId, slug: idOrSlug, status: 'active' });
  }

  list(
    organisationId: string,
    filter: DeploymentFilter,
    page: { offset: number; limit: number },
  ): Promise<[Deployment[], number]> {
    return this.manager.getRepository(DeploymentEntity).findAndCount({
      where: { organisationId, status: filter.status, ...(filter.type ? { type: filter.type } : {}) },
      order: { createdAt: 'ASC', id: 'ASC' },
      skip: page.offset,
      take: page.limit,
    });
  }

  /** Null when the deployment was archived meanwhile. */
  async update(deployment: Deployment, changes: DeploymentChanges, now: Date): Promise<Deployment | null> {
    try {
      return await this.manager.transaction(async (tx) => {
        if (changes.isDefault && !deployment.isDefault) {
          await this.clearDefault(tx, deployment.organisationId, deployment.id, now);
        }
        const { affected } = await tx
          .getRepository(DeploymentEntity)
          .createQueryBuilder()
          .update()
          .set({ ...row(changes), updatedAt: now, settingsRevision: () => 'settings_revision + 1' })
          .where({ id: deployment.id, status: 'active' })
          .execute();
        if (!affected) return null;
        return tx.getRepository(DeploymentEntity).findOneBy({ id: deployment.id });
      });
    } catch (err) {
      throw conflictOf(err, changes.slug);
    }
  }

  /** Archives the live deployment (it is no longer the default); false when it was archived already. */
  async archive(id: string, now: Date): Promise<boolean> {
    const { affected } = await this.manager
      .getRepository(DeploymentEntity)
      .createQueryBuilder()
      .update()
      .set({
        status: 'archived',
        isDefault: false,
        updatedAt: now,
        settingsRevision: () => 'settings_revision + 1',
      })
      .where({ id, status: 'active' })
      .execute();
    return Boolean(affected);
  }

  /** The deployment's gateway instances, newest heartbeat first. */
  instances(deploymentId: string): Promise<DeploymentInstance[]> {
    return this.manager.getRepository(DeploymentInstanceEntity).find({
      where: { deploymentId },
      order: { lastHeartbeatAt: 'DESC', instanceId: 'ASC' },
    });
  }

  /** The gateway instances of each deployment listed, newest heartbeat first, in one query. */
  async instancesOf(deploymentIds: string[]): Promise<Map<string, DeploymentInstance[]>> {
    const byDeployment = new Map(deploymentIds.map((id) => [id, [] as DeploymentInstance[]]));
    if (deploymentIds.length === 0) return byDeployment;
    const instances = await this.manager.getRepository(DeploymentInstanceEntity).find({
      where: { deploymentId: In(deploymentIds) },
      order: { lastHeartbeatAt: 'DESC', instanceId: 'ASC' },
    });
    for (const instance of instances) byDeployment.get(instance.deploymentId)?.push(instance);
    return byDeployment;
  }

  /**
   * Records an instance's heartbeat and the settings revision it is answered. When a known
   * instance had been answered an older revision, it now picks up changed settings: the
   * deployment's `last_resynced_at` becomes `now`.
   */
  async heartbeat(
    deployment: Deployment,
    instance: Pick<DeploymentInstance, 'instanceId' | 'version' | 'features'>,
    now: Date,
  ): Promise<void> {
    await this.manager.transaction(async (tx) => {
      const [row] = (await tx.query(
        `INSERT INTO admin.deployment_instances
           (deployment_id, instance_id, version, features, settings_revision, first_seen_at, last_heartbeat_at)
         VALUES ($1, $2, $3, $4, $5, $6, $6)
         ON CONFLICT (deployment_id, instance_id) DO UPDATE
           SET version = EXCLUDED.version,
               features = EXCLUDED.features,
               settings_revision = EXCLUDED.settings_revision,
               last_heartbeat_at = EXCLUDED.last_heartbeat_at
         RETURNING (SELECT settings_revision FROM admin.deployment_instances
                     WHERE deployment_id = $1 AND instance_id = $2) AS previous_revision`,
        [
          deployment.id,
          instance.instanceId,
          instance.version,
          JSON.stringify(instance.features),
          deployment.settingsRevision,
          now,
        ],
      )) as Array<{ previous_revision: number | null }>;
      const previous = row?.previous_revision;
      if (previous !== null && previous !== undefined && previous < deployment.settingsRevision) {
        await tx.getRepository(DeploymentEntity).update({ id: deployment.id }, { lastResyncedAt: now });
      }
    });
  }

  private async clearDefault(tx: EntityManager, organisationId: string, exceptId: string, now: Date) {
    await tx
      .getRepository(DeploymentEntity)
      .createQueryBuilder()
      .update()
      .set({ isDefault: false, updatedAt: now, settingsRevision: () => 'settings_revision + 1' })
      .where('organisation_id = :organisationId AND is_default AND id <> :exceptId', {
        organisationId,
        exceptId,
      })
      .execute();
  }
}
