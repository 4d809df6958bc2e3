import { NotFound, type Logger } from '@switchyard/core';
import type { ScimRepository } from '../store/scim.repository.ts';
import type { OrganisationDirectory } from './organisation-directory.ts';

/**
 * How SCIM groups become workspace memberships: after a change to users, groups or mappings,
 * the memberships of the users concerned in the workspaces concerned are brought in line with
 * the mappings of their groups, in control-plane (so the same steps run as for an
 * administrator's changes: keys created on joining, keys and tokens revoked on leaving).
 */
export class ScimWorkspaceSync {
  constructor(
    private readonly repo: ScimRepository,
    private readonly directory: Pick<OrganisationDirectory, 'setWorkspaceMember'>,
    private readonly logger: Logger,
  ) {}

  /**
   * Brings the memberships of these users in these workspaces in line with their groups:
   * the highest role a mapping of one of their groups gives, or none. A workspace deleted in
   * the meantime is passed over.
   */
  async sync(
    organisationId: string,
    userIds: readonly string[],
    workspaceIds: readonly string[],
  ): Promise<void> {
    for (const workspaceId of new Set(workspaceIds)) {
      const roles = await this.repo.rolesIn(organisationId, workspaceId, userIds);
      const users = await this.repo.findUsers(organisationId, userIds);
      for (const user of users) {
        if (!user.active) continue;
        try {
          await this.directory.setWorkspaceMember(
            organisationId,
            workspaceId,
            user.userId,
            roles.get(user.userId) ?? null,
          );
        } catch (err) {
          if (!(err instanceof NotFound)) throw err;
          this.logger.warn('SCIM: workspace membership not changed', {
            organisation_id: organisationId,
            workspace_id: workspaceId,
            reason: err.message,
          });
        }
      }
    }
  }
}
