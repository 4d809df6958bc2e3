import type { EntityManager } from 'typeorm';
import { scopesForKind } from '@switchyard/access';
import { keyMaterialOf } from '../domain/api-keys.ts';
import { IdentityRepository } from '../store/identity.repository.ts';

export interface SeededOrganisation {
  organisationId: string;
  /** Its one workspace, with the slug `default`. */
  workspaceId: string;
  adminKey: string;
  workspaceKey: string;
}

/**
 * For tests: one more organisation, written straight to the store (the API creates none),
 * with a default workspace, an organisation admin key and a workspace service key.
 */
export async function seedOrganisation(manager: EntityManager, slug: string): Promise<SeededOrganisation> {
  const repo = new IdentityRepository(manager);
  const organisation = await repo.createOrganisation(slug, slug);
  const workspace = await repo.createWorkspace({
    organisationId: organisation.id,
    name: `${slug} default`,
    slug: 'default',
    description: null,
  });
  const adminKey = `sy-${slug}-admin-key-0000000000000000`;
  const workspaceKey = `sy-${slug}-workspace-key-000000000000`;
  const common = {
    organisationId: organisation.id,
    description: null,
    userId: null,
    expiresAt: null,
  };
  await repo.insertApiKey({
    ...common,
    workspaceId: null,
    kind: 'organisation_admin',
    scopes: [...scopesForKind('organisation_admin')],
    name: `${slug} admin`,
    ...keyMaterialOf(adminKey, 'sy-'),
  });
  await repo.insertApiKey({
    ...common,
    workspaceId: workspace.id,
    kind: 'workspace_service',
    scopes: [...scopesForKind('workspace_service')],
    name: `${slug} workspace`,
    ...keyMaterialOf(workspaceKey, 'sy-'),
  });
  return { organisationId: organisation.id, workspaceId: workspace.id, adminKey, workspaceKey };
}
