import { Conflict, Forbidden } from '@switchyard/core';
import { scopesForWorkspaceRole } from '@switchyard/access';
import type { SsoSessionRepository } from '../store/sso-session.repository.ts';
import { provisioningPrincipal, type MemberService } from './member.service.ts';
import type { SessionService } from './session.service.ts';

export interface SsoLoginIdentity {
  organisationId: string;
  /** Verified by the organisation's identity provider. */
  email: string;
  firstName: string | undefined;
  lastName: string | undefined;
  /** The connection's `disable_auto_provision_user`, inverted. */
  autoProvision: boolean;
}

export interface SsoSession {
  token: string;
  expiresAt: Date;
  userId: string;
  provisioned: boolean;
}

/**
 * Turns an SSO login into a browser session. A member signs in to the workspace they joined
 * first, with the scopes of their role there. A person who is not a member yet joins the
 * organisation as a member, and its first workspace as a member, unless the connection
 * disables auto-provisioning.
 */
export class SsoSessionService {
  constructor(
    private readonly repo: SsoSessionRepository,
    private readonly members: MemberService,
    private readonly sessions: SessionService,
  ) {}

  async open(
    login: SsoLoginIdentity,
    from: { userAgent: string | undefined; clientIp: string | undefined },
  ): Promise<SsoSession> {
    let member = await this.repo.findMember(login.organisationId, login.email);
    let provisioned = false;
    if (!member) {
      if (!login.autoProvision) {
        throw new Forbidden(
          'You are not a member of this organisation, and its SSO connection does not add people on their first login: ask an administrator to add you.',
          { code: 'sso_user_not_provisioned' },
        );
      }
      await this.provision(login);
      member = await this.repo.findMember(login.organisationId, login.email);
      provisioned = true;
    }
    if (!member?.workspace) {
      throw new Forbidden(
        'You are a member of this organisation but of none of its workspaces: ask an administrator to add you to one.',
        { code: 'sso_no_workspace' },
      );
    }
    const { token, expiresAt } = await this.sessions.openForUser(
      {
        organisationId: login.organisationId,
        workspaceId: member.workspace.id,
        email: member.email,
        scopes: scopesForWorkspaceRole(member.workspace.role),
      },
      from,
    );
    return { token, expiresAt, userId: member.userId, provisioned };
  }

  /** Adds the person as an administrator would: organisation member, then member of its first workspace. */
  private async provision(login: SsoLoginIdentity): Promise<void> {
    const principal = provisioningPrincipal(login.organisationId, 'SSO provisioning');
    let userId: string;
    try {
      userId = (
        await this.members.addUser(principal, {
          email: login.email,
          firstName: login.firstName,
          lastName: login.lastName,
          role: 'member',
        })
      ).user.id;
    } catch (err) {
      // A second login of the same person at the same moment added them first.
      if (!(err instanceof Conflict)) throw err;
      return;
    }
    const workspaceId = await this.repo.firstWorkspaceId(login.organisationId);
    if (workspaceId === null) return;
    try {
      await this.members.addWorkspaceMembers(principal, workspaceId, [{ userId, role: 'member' }]);
    } catch (err) {
      if (!(err instanceof Conflict)) throw err;
    }
  }
}
