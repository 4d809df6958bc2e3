import type { Logger } from '@switchyard/core';
import { scopesForKind } from '@switchyard/access';
import type { Organisation, Workspace } from '../store/entities.ts';
import type { IdentityRepository } from '../store/identity.repository.ts';
import { generateApiKey, keyMaterialOf } from './api-keys.ts';

export interface BootstrapResult {
  created: boolean;
  organisation: Organisation;
  workspace: Workspace | null;
  /** Present only when this call generated the key (it is never stored in clear). */
  adminKey?: string;
  workspaceKey?: string;
}

/** The first start of a deployment: its first organisation, default workspace and admin key. */
export class BootstrapService {
  constructor(
    private readonly repo: IdentityRepository,
    private readonly logger: Logger,
    private readonly apiKeyPrefix: string,
  ) {}

  /**
   * Creates the first organisation, its default workspace and an admin key, once. Safe to
   * run from several replicas at the same time.
   */
  async bootstrap(options: {
    adminKey?: string | undefined;
    withWorkspaceKey: boolean;
  }): Promise<BootstrapResult> {
    return this.repo.transaction(async (repo) => {
      await repo.lockBootstrap();
      const existing = await repo.firstOrganisation();
      if (existing) return { created: false, organisation: existing, workspace: null };
      const organisation = await repo.createOrganisation('Default organisation', 'default');
      const workspace = await repo.createWorkspace({
        organisationId: organisation.id,
        name: 'Default workspace',
        slug: 'default',
        description: null,
      });
      const generated = options.adminKey ? undefined : generateApiKey(this.apiKeyPrefix);
      const adminKey = options.adminKey ?? generated!.key;
      await repo.insertApiKey({
        organisationId: organisation.id,
        workspaceId: null,
        kind: 'organisation_admin',
        name: 'Bootstrap admin key',
        description: 'Created when the organisation was bootstrapped.',
        scopes: [...scopesForKind('organisation_admin')],
        userId: null,
        expiresAt: null,
        ...keyMaterialOf(adminKey, this.apiKeyPrefix),
      });
      let workspaceKey: string | undefined;
      if (options.withWorkspaceKey) {
        const material = generateApiKey(this.apiKeyPrefix);
        await repo.insertApiKey({
          organisationId: organisation.id,
          workspaceId: workspace.id,
          kind: 'workspace_service',
          name: 'Default workspace key',
          description: null,
          scopes: [...scopesForKind('workspace_service')],
          userId: null,
          expiresAt: null,
          keyHash: material.keyHash,
          keyHint: material.keyHint,
        });
        workspaceKey = material.key;
      }
      this.logger.info('bootstrapped organisation', {
        organisation_id: organisation.id,
        workspace_id: workspace.id,
      });
      return { created: true, organisation, workspace, adminKey: generated?.key, workspaceKey };
    });
  }
}
