import { BadRequest, Conflict, NotFound } from '@switchyard/core';
import type { ScimUser } from '../store/entities.ts';
import type { Page, ScimEquality, ScimRepository } from '../store/scim.repository.ts';
import type { OrganisationDirectory } from './organisation-directory.ts';
import { invalidPatch, isUuid, textValue, type PatchOperation } from './scim-shared.ts';
import type { ScimWorkspaceSync } from './scim-workspace-sync.ts';

/** A user as the identity provider describes it (parsed at the edge). */
export type ScimUserInput = Omit<ScimUser, 'organisationId' | 'userId' | 'createdAt' | 'updatedAt'>;

export interface UserWithGroups extends ScimUser {
  groups: Array<{ id: string; displayName: string }>;
}

/**
 * The users an organisation's identity provider pushes (SCIM `/Users`). A user becomes an
 * organisation user in control-plane; deactivating or deleting one removes them there, and
 * reactivating one brings back the workspace memberships their groups give.
 */
export class ScimUserService {
  constructor(
    private readonly repo: ScimRepository,
    private readonly directory: Pick<OrganisationDirectory, 'provisionUser' | 'removeUser'>,
    private readonly workspaces: ScimWorkspaceSync,
  ) {}

  async listUsers(
    organisationId: string,
    filter: ScimEquality | null,
    page: Page,
  ): Promise<[UserWithGroups[], number]> {
    const [users, total] = await this.repo.listUsers(organisationId, filter, page);
    return [await this.withGroups(organisationId, users), total];
  }

  async getUser(organisationId: string, userId: string): Promise<UserWithGroups> {
    const [user] = await this.withGroups(organisationId, [await this.findUser(organisationId, userId)]);
    return user!;
  }

  async createUser(organisationId: string, input: ScimUserInput): Promise<UserWithGroups> {
    const userId = await this.directory.provisionUser(organisationId, {
      email: input.email,
      firstName: input.givenName,
      lastName: input.familyName,
    });
    const existing = await this.repo.findUser(organisationId, userId);
    if (existing) {
      throw new Conflict(`The user '${input.email}' is provisioned already, as '${existing.userName}'.`, {
        param: 'userName',
        code: 'uniqueness',
      });
    }
    const now = new Date();
    await this.repo.insertUser({ organisationId, userId, ...input, createdAt: now, updatedAt: now });
    if (!input.active) await this.directory.removeUser(organisationId, userId);
    return this.getUser(organisationId, userId);
  }

  async replaceUser(organisationId: string, userId: string, input: ScimUserInput): Promise<UserWithGroups> {
    const current = await this.findUser(organisationId, userId);
    return this.saveUser(current, input);
  }

  async patchUser(
    organisationId: string,
    userId: string,
    operations: readonly PatchOperation[],
  ): Promise<UserWithGroups> {
    const current = await this.findUser(organisationId, userId);
    const next: ScimUserInput = {
      userName: current.userName,
      email: current.email,
      externalId: current.externalId,
      givenName: current.givenName,
      familyName: current.familyName,
      displayName: current.displayName,
      active: current.active,
    };
    for (const operation of operations) applyUserOperation(next, operation);
    return this.saveUser(current, next);
  }

  /** The user leaves the organisation; the identity provider's record of them goes. */
  async deleteUser(organisationId: string, userId: string): Promise<void> {
    const user = await this.findUser(organisationId, userId);
    // The delete decides between concurrent deletes; only its winner removes the user upstream.
    if (!(await this.repo.deleteUser(organisationId, user.userId)))
      throw new NotFound(`User '${userId}' not found.`);
    if (user.active) await this.directory.removeUser(organisationId, user.userId);
  }

  private async saveUser(current: ScimUser, input: ScimUserInput): Promise<UserWithGroups> {
    const { organisationId, userId } = current;
    if (input.email.toLowerCase() !== current.email.toLowerCase()) {
      throw new BadRequest(
        `Invalid body parameter 'emails': the email of a provisioned user cannot change (it is '${current.email}').`,
        { param: 'emails', code: 'mutability' },
      );
    }
    await this.repo.updateUser({ ...current, ...input, updatedAt: new Date() });
    if (current.active && !input.active) {
      await this.directory.removeUser(organisationId, userId);
    } else if (!current.active && input.active) {
      await this.directory.provisionUser(organisationId, {
        email: input.email,
        firstName: input.givenName,
        lastName: input.familyName,
      });
      await this.workspaces.sync(
        organisationId,
        [userId],
        await this.repo.mappedWorkspacesOf(organisationId, [userId]),
      );
    }
    return this.getUser(organisationId, userId);
  }

  private async findUser(organisationId: string, userId: string): Promise<ScimUser> {
    const user = isUuid(userId) ? await this.repo.findUser(organisationId, userId) : null;
    if (!user) throw new NotFound(`User '${userId}' not found.`);
    return user;
  }

  private async withGroups(organisationId: string, users: ScimUser[]): Promise<UserWithGroups[]> {
    const groups = await this.repo.groupsOf(
      organisationId,
      users.map((user) => user.userId),
    );
    return users.map((user) => ({
      ...user,
      groups: (groups.get(user.userId) ?? []).map((g) => ({ id: g.id, displayName: g.displayName })),
    }));
  }
}

/** `"True"`/`"False"` as some identity providers send them, or a boolean. */
function booleanValue(value: unknown, path: string): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value)) return value.toLowerCase() === 'true';
  throw invalidPatch(`Invalid PATCH value for '${path}': must be a boolean.`, path);
}

/** The user attributes a PATCH may change; the email (and so userName's person) stays. */
function applyUserOperation(user: ScimUserInput, operation: PatchOperation): void {
  if (operation.path === undefined) {
    if (operation.op === 'remove') throw invalidPatch("A 'remove' operation needs a path.");
    if (typeof operation.value !== 'object' || operation.value === null || Array.isArray(operation.value)) {
      throw invalidPatch('An operation without a path needs an object value.');
    }
    for (const [path, value] of Object.entries(operation.value)) {
      if (path === 'name' && typeof value === 'object' && value !== null) {
        for (const [part, partValue] of Object.entries(value)) {
          applyUserOperation(user, { op: operation.op, path: `name.${part}`, value: partValue });
        }
      } else applyUserOperation(user, { op: operation.op, path, value });
    }
    return;
  }
  const removing = operation.op === 'remove';
  const value = removing ? null : operation.value;
  switch (operation.path.toLowerCase()) {
    case 'active':
      if (removing) throw invalidPatch("'active' cannot be removed.", 'active');
      user.active = booleanValue(value, 'active');
      return;
    case 'displayname':
      user.displayName = textValue(value, 'displayName', true);
      return;
    case 'externalid':
      user.externalId = textValue(value, 'externalId', true);
      return;
    case 'name.givenname':
      user.givenName = textValue(value, 'name.givenName', true);
      return;
    case 'name.familyname':
      user.familyName = textValue(value, 'name.familyName', true);
      return;
    case 'username':
      if (removing) throw invalidPatch("'userName' cannot be removed.", 'userName');
      user.userName = textValue(value, 'userName', false)!;
      return;
    default:
      throw new BadRequest(`PATCH path '${operation.path}' is not supported for users.`, {
        param: 'path',
        code: 'invalidPath',
      });
  }
}
