import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import {
  BadRequest,
  Conflict,
  NotFound,
  maskSecret,
  parseInput,
  type PageQuery,
  type SecretBox,
} from '@switchyard/core';
import type { Principal } from '@switchyard/access';
import type { DeploymentFilter, DeploymentRepository } from '../store/deployment.repository.ts';
import type {
  Deployment,
  DeploymentAuthSettings,
  DeploymentInstance,
  GatewayFeatures,
} from '../store/entities.ts';
import {
  isUuid,
  type AuthSettingsInput,
  type CreateDeploymentInput,
  type UpdateDeploymentInput,
} from './deployment.schemas.ts';
import type { OrganisationDirectory } from './organisation-directory.ts';

export type ConnectionStatus = 'healthy' | 'unhealthy' | 'unknown';

/** A heartbeat this recent makes a deployment healthy. */
export const HEALTHY_WITHIN_MS = 90_000;
/** A heartbeat this recent (and older than HEALTHY_WITHIN_MS) makes it unhealthy; older ones, unknown. */
export const UNHEALTHY_WITHIN_MS = 15 * 60_000;

/** The gateway versions a behaviour needs at least. */
const FEATURE_VERSIONS: Record<keyof GatewayFeatures, readonly [number, number, number]> = {
  block_inline_config: [2, 11, 0],
  mcp_tool_rate_limits: [2, 18, 0],
};

const SEMVER = /^v?(\d{1,9})\.(\d{1,9})\.(\d{1,9})(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;

/** What a gateway of this version supports; null when the version is not semver. */
export function featuresOf(version: string): GatewayFeatures | null {
  const match = SEMVER.exec(version);
  if (!match) return null;
  const core = [Number(match[1]), Number(match[2]), Number(match[3])] as const;
  const preRelease = match[4] !== undefined;
  // A pre-release comes before its release: 2.11.0-rc.1 is below 2.11.0.
  const atLeast = (min: readonly [number, number, number]) => {
    for (let i = 0; i < 3; i++) if (core[i] !== min[i]) return core[i]! > min[i]!;
    return !preRelease;
  };
  return {
    block_inline_config: atLeast(FEATURE_VERSIONS.block_inline_config),
    mcp_tool_rate_limits: atLeast(FEATURE_VERSIONS.mcp_tool_rate_limits),
  };
}

/** A deployment with its gateway instances, newest heartbeat first. */
export interface DeploymentView {
  deployment: Deployment;
  instances: DeploymentInstance[];
}

const emptyAuthSettings = (): DeploymentAuthSettings => ({
  gateway_base_url: null,
  mcp_gateway_base_url: null,
  private_link_endpoint: null,
  use_private_link_proxy: false,
  is_dataservice_hosted: false,
  is_playground_proxy_allowed: false,
  disable_vendor_gateway: false,
  allow_all_workspaces: false,
  workspaces_allowed: [],
  jwt_subs_allowed: [],
  jwt_sub_workspace_mapping: {},
});

/** The settings given replace those stored; the others are kept. Flags are stored as booleans. */
function mergeAuthSettings(stored: DeploymentAuthSettings, input: AuthSettingsInput): DeploymentAuthSettings {
  const merged: DeploymentAuthSettings = { ...stored };
  for (const [name, value] of Object.entries(input) as Array<[keyof DeploymentAuthSettings, unknown]>) {
    if (value === undefined) continue;
    (merged as unknown as Record<string, unknown>)[name] = value === 0 || value === 1 ? value === 1 : value;
  }
  return merged;
}

/**
 * An organisation's gateway deployments: where its gateways run, how they authenticate callers
 * and which workspaces they serve. The credentials' password is encrypted before it reaches the
 * database and only ever shown masked. Gateway instances report with heartbeats, from which the
 * connection status is told.
 */
export class DeploymentService {
  constructor(
    private readonly repo: DeploymentRepository,
    private readonly secrets: SecretBox,
    private readonly directory: Pick<OrganisationDirectory, 'findWorkspace'>,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  /** A new default deployment makes the organisation's previous default no longer one. */
  async create(principal: Principal, input: CreateDeploymentInput): Promise<DeploymentView> {
    const workspaces = await this.checkWorkspaces(principal.organisationId, input.workspaces);
    const deployment = await this.repo.insert(
      {
        id: randomUUID(),
        organisationId: principal.organisationId,
        name: input.name,
        slug: input.slug ?? slugOf(input.name),
        type: input.type,
        isDefault: input.isDefault === 1,
        tags: input.tags,
        authSettings: mergeAuthSettings(
          {
            ...emptyAuthSettings(),
            // A deployment that names no workspaces serves all of its organisation's.
            allow_all_workspaces:
              (input.authSettings.workspaces_allowed ?? []).length === 0 && input.workspaces.length === 0,
          },
          input.authSettings,
        ),
        deploymentConfig: input.deploymentConfig,
        workspaces,
        credentialsUsername: input.credentials?.username ?? null,
        encryptedCredentialsPassword: input.credentials
          ? this.secrets.encrypt(input.credentials.password)
          : null,
        clientAuth: input.clientAuth ?? null,
        createdBy: principal.userId ?? principal.apiKeyId,
      },
      this.clock(),
    );
    return { deployment, instances: [] };
  }

  /** By id (archived ones too) or by the slug of a live one. */
  async get(principal: Principal, ref: string): Promise<DeploymentView> {
    const deployment = await this.find(principal.organisationId, ref);
    return { deployment, instances: await this.repo.instances(deployment.id) };
  }

  async list(
    principal: Principal,
    filter: DeploymentFilter,
    page: PageQuery,
  ): Promise<[DeploymentView[], number]> {
    const [deployments, total] = await this.repo.list(principal.organisationId, filter, page);
    const instances = await this.repo.instancesOf(deployments.map((deployment) => deployment.id));
    const views = deployments.map((deployment) => ({
      deployment,
      instances: instances.get(deployment.id) ?? [],
    }));
    return [views, total];
  }

  /**
   * Changes what is given and keeps the rest; credentials given replace the stored ones (null
   * removes them). An archived deployment cannot be changed.
   */
  async update(principal: Principal, ref: string, input: UpdateDeploymentInput): Promise<DeploymentView> {
    const deployment = await this.find(principal.organisationId, ref);
    if (deployment.status === 'archived') {
      throw new Conflict(`Deployment '${ref}' is archived and cannot be changed.`, { param: 'status' });
    }
    const workspaces =
      input.workspaces === undefined
        ? deployment.workspaces
        : await this.checkWorkspaces(principal.organisationId, input.workspaces);
    let { credentialsUsername, encryptedCredentialsPassword } = deployment;
    if (input.credentials !== undefined) {
      credentialsUsername = input.credentials?.username ?? null;
      encryptedCredentialsPassword = input.credentials
        ? this.secrets.encrypt(input.credentials.password)
        : null;
    }
    const updated = await this.repo.update(
      deployment,
      {
        name: input.name ?? deployment.name,
        slug: input.slug ?? deployment.slug,
        type: input.type ?? deployment.type,
        isDefault: input.isDefault === undefined ? deployment.isDefault : input.isDefault === 1,
        tags: input.tags ?? deployment.tags,
        authSettings: input.authSettings
          ? mergeAuthSettings(deployment.authSettings, input.authSettings)
          : deployment.authSettings,
        deploymentConfig: input.deploymentConfig ?? deployment.deploymentConfig,
        workspaces,
        credentialsUsername,
        encryptedCredentialsPassword,
        clientAuth: input.clientAuth === undefined ? deployment.clientAuth : input.clientAuth,
      },
      this.clock(),
    );
    if (!updated)
      throw new Conflict(`Deployment '${ref}' is archived and cannot be changed.`, { param: 'status' });
    return { deployment: updated, instances: await this.repo.instances(updated.id) };
  }

  /** Archives the deployment: listed only when archived ones are asked for, still shown by id. */
  async delete(principal: Principal, ref: string): Promise<void> {
    const deployment = await this.find(principal.organisationId, ref);
    // Of concurrent deletes only the one whose update archived it succeeds.
    if (deployment.status === 'archived' || !(await this.repo.archive(deployment.id, this.clock()))) {
      throw new NotFound(`Deployment '${ref}' not found.`, { param: 'deploymentId' });
    }
  }

  /**
   * A gateway instance reports for a live deployment of its organisation; it is answered the
   * deployment as it stands now, to apply its settings.
   */
  async heartbeat(
    organisationId: string,
    ref: string,
    instance: { instanceId: string; version: string },
  ): Promise<Deployment> {
    const id = parseInput(z.uuid(), organisationId, 'request', 'organisation_id');
    const instanceId = parseInput(
      z.string().regex(/^[\w.:-]{1,128}$/, 'letters, digits, _ . : and -, up to 128 characters'),
      instance.instanceId,
      'request',
      'instance_id',
    );
    const features = featuresOf(instance.version);
    if (!features) {
      throw new BadRequest(`'${instance.version.slice(0, 64)}' is not a semantic version such as 2.18.0.`, {
        param: 'version',
      });
    }
    const deployment =
      ref && /^[a-zA-Z0-9_-]{1,50}$/.test(ref) ? await this.repo.find(id, ref, isUuid(ref)) : null;
    if (!deployment || deployment.status !== 'active') {
      throw new NotFound(`Deployment '${ref.slice(0, 64)}' not found.`, { param: 'deployment' });
    }
    await this.repo.heartbeat(deployment, { instanceId, version: instance.version, features }, this.clock());
    return (await this.repo.find(id, deployment.id, true)) ?? deployment;
  }

  /** Told from the newest heartbeat of any of its instances. */
  connectionStatus(instances: readonly DeploymentInstance[]): ConnectionStatus {
    const newest = instances[0];
    if (!newest) return 'unknown';
    const age = this.clock().getTime() - newest.lastHeartbeatAt.getTime();
    if (age <= HEALTHY_WITHIN_MS) return 'healthy';
    if (age <= UNHEALTHY_WITHIN_MS) return 'unhealthy';
    return 'unknown';
  }

  /** The password only ever appears masked; null when no credentials are set. */
  maskedCredentials(deployment: Deployment): { username: string; password: string } | null {
    if (deployment.credentialsUsername === null || deployment.encryptedCredentialsPassword === null)
      return null;
    return {
      username: deployment.credentialsUsername,
      password: maskSecret(this.secrets.decrypt(deployment.encryptedCredentialsPassword)),
    };
  }

  private async find(organisationId: string, ref: string): Promise<Deployment> {
    const deployment = await this.repo.find(organisationId, ref, isUuid(ref));
    if (!deployment) throw new NotFound(`Deployment '${ref}' not found.`, { param: 'deploymentId' });
    return deployment;
  }

  /** Each workspace named must be one of the organisation's, under its own slug. */
  private async checkWorkspaces(
    organisationId: string,
    workspaces: ReadonlyArray<{ id: string; slug: string }>,
  ): Promise<Array<{ id: string; slug: string }>> {
    const checked: Array<{ id: string; slug: string }> = [];
    for (const [index, { id, slug }] of workspaces.entries()) {
      const workspace = await this.directory.findWorkspace(organisationId, id);
      if (!workspace) {
        throw new NotFound(`Workspace '${id}' not found.`, {
          param: `workspaces[${index}].id`,
          code: 'workspace_not_found',
        });
      }
      if (workspace.slug !== slug) {
        throw new BadRequest(`Workspace '${id}' has the slug '${workspace.slug}', not '${slug}'.`, {
          param: `workspaces[${index}].slug`,
        });
      }
      checked.push({ id: workspace.id, slug: workspace.slug });
    }
    return checked;
  }
}

/** A slug from a name: lower case, runs of other characters as one -. */
function slugOf(name: string): string {
  const slug = name
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 50);
  if (!slug) return 'deployment';
  // A slug never reads as an id.
  return isUuid(slug) ? `d-${slug.slice(0, 48)}` : slug;
}
