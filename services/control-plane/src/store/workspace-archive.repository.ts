import { IsNull, type EntityManager } from 'typeorm';
import { SavedConfigEntity, type SavedConfig } from './config.entities.ts';
import { ConfigRepository } from './config.repository.ts';
import { ApiKeyEntity, WorkspaceEntity, type ApiKey, type Workspace } from './entities.ts';
import { GuardrailEntity, type Guardrail } from './guardrail.entities.ts';
import { GuardrailRepository } from './guardrail.repository.ts';
import { WorkspaceMemberEntity } from './member.entities.ts';
import {
  RateLimitPolicyEntity,
  UsageLimitPolicyEntity,
  type RateLimitPolicy,
  type UsageLimitPolicy,
} from './policy.entities.ts';
import { PolicyRepository } from './policy.repository.ts';
import { archivePromptsOf, sharedPromptsOf, type Prompt } from './prompt.repository.ts';
import { Conflict } from '@switchyard/core';

/*
 * TypeORM throughout, the per-item archives of configs, guardrails and policies included (each
 * runs in a savepoint of the one transaction), except the two statements that revoke a
 * workspace's OAuth tokens and browser sessions (UPDATE ... RETURNING, as their repositories do).
 */

/** What archiving a workspace revoked and archived along with it, for the caches to drop. */
export interface ArchivedWorkspace {
  workspace: Workspace;
  apiKeys: ApiKey[];
  configs: SavedConfig[];
  guardrails: Guardrail[];
  policies: Array<RateLimitPolicy | UsageLimitPolicy>;
  /** The users who were its members. */
  members: string[];
  oauthTokens: Array<{ id: string; tokenHash: string }>;
  sessions: Array<{ tokenHash: string }>;
  /** Its prompts and partials (archived), and those of other workspaces that were shared with it. */
  prompts: Prompt[];
}

/** Deleting a workspace: everything of it, in one transaction. */
export class WorkspaceArchiveRepository {
  constructor(private readonly manager: EntityManager) {}

  /**
   * Archives the live workspace and, in the same transaction, revokes its API keys, OAuth
   * tokens and sessions, archives its configs, guardrails and policies and removes its
   * members, archives its prompts and partials and removes the shares of others' with it. Refuses
   * (409) while it shares a prompt or partial with another workspace. The workspace row stays locked until the commit, so of concurrent deletes one
   * archives it and the others find nothing (null), and a key being issued into it waits.
   */
  archive(workspaceId: string, actorId: string): Promise<ArchivedWorkspace | null> {
    return this.manager.transaction(async (manager) => {
      const workspaces = manager.getRepository(WorkspaceEntity);
      const workspace = await workspaces.findOne({
        where: { id: workspaceId, archivedAt: IsNull() },
        lock: { mode: 'pessimistic_write' },
      });
      if (!workspace) return null;
      // Under the workspace's lock, which a share takes too: no share slips in after this check.
      const shared = await sharedPromptsOf(manager, workspaceId);
      if (shared.length > 0) {
        throw new Conflict(
          `Workspace '${workspace.slug}' shares ${shared
            .map((p) => `${p.kind === 'prompt' ? 'prompt' : 'partial'} '${p.slug}'`)
            .join(', ')} with other workspaces: unshare them first.`,
          { code: 'workspace_has_shared_prompts' },
        );
      }
      const now = new Date();
      // Cleared first: a config named as the workspace's default cannot be archived (nor one a
      // key's default names: the keys are revoked before the configs go).
      await workspaces.update(
        { id: workspaceId },
        { userApiKeyConfigId: null, defaultConfigId: null, archivedAt: now, updatedAt: now },
      );

      const keys = manager.getRepository(ApiKeyEntity);
      const apiKeys = await keys.find({
        where: { workspaceId, status: 'active' },
        lock: { mode: 'pessimistic_write' },
      });
      for (const apiKey of apiKeys) {
        await keys.update({ id: apiKey.id }, { status: 'revoked', updatedAt: now });
      }

      const configRepo = new ConfigRepository(manager);
      const configs: SavedConfig[] = [];
      for (const { id } of await manager
        .getRepository(SavedConfigEntity)
        .find({ where: { workspaceId, status: 'active' }, select: { id: true } })) {
        const written = await configRepo.update(id, { status: 'archived' }, actorId);
        if (written && 'config' in written) configs.push(written.config);
      }

      const guardrailRepo = new GuardrailRepository(manager);
      const guardrails: Guardrail[] = [];
      for (const { id } of await manager
        .getRepository(GuardrailEntity)
        .find({ where: { workspaceId, status: 'active' }, select: { id: true } })) {
        const written = await guardrailRepo.update(id, { status: 'archived' }, actorId);
        if (written) guardrails.push(written.guardrail);
      }

      const policyRepo = new PolicyRepository(manager);
      const policies: Array<RateLimitPolicy | UsageLimitPolicy> = [];
      for (const { id } of await manager
        .getRepository(RateLimitPolicyEntity)
        .find({ where: { workspaceId, status: 'active' }, select: { id: true } })) {
        const archived = await policyRepo.update('rate_limit', id, () => ({ status: 'archived' }) as const);
        if (archived) policies.push(archived);
      }
      for (const { id } of await manager
        .getRepository(UsageLimitPolicyEntity)
        .find({ where: { workspaceId, status: 'active' }, select: { id: true } })) {
        const archived = await policyRepo.update('usage_limit', id, () => ({ status: 'archived' }) as const);
        if (archived) policies.push(archived);
      }

      const memberships = manager.getRepository(WorkspaceMemberEntity);
      const members = (await memberships.find({ where: { workspaceId }, select: { userId: true } })).map(
        (member) => member.userId,
      );
      await memberships.delete({ workspaceId });

      // Refresh tokens too, though only access tokens are held by caches.
      const [tokens] = (await manager.query(
        `UPDATE control_plane.oauth_tokens SET revoked_at = now()
          WHERE workspace_id = $1 AND revoked_at IS NULL
          RETURNING id, kind, token_hash AS "tokenHash"`,
        [workspaceId],
      )) as [Array<{ id: string; kind: 'access' | 'refresh'; tokenHash: string }>, number];
      const [sessions] = (await manager.query(
        `UPDATE control_plane.sessions SET revoked_at = now()
          WHERE workspace_id = $1 AND revoked_at IS NULL RETURNING token_hash AS "tokenHash"`,
        [workspaceId],
      )) as [Array<{ tokenHash: string }>, number];

      const prompts = await archivePromptsOf(manager, workspaceId);

      return {
        workspace: { ...workspace, userApiKeyConfigId: null, archivedAt: now, updatedAt: now },
        apiKeys,
        configs,
        guardrails,
        policies,
        members,
        oauthTokens: tokens.filter((token) => token.kind === 'access'),
        sessions,
        prompts,
      };
    });
  }
}
