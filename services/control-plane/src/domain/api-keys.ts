import { BadRequest, Forbidden, randomToken, sha256Hex } from '@switchyard/core';
import {
  isScope,
  scopesForKind,
  scopesForWorkspaceRole,
  type ApiKeyKind,
  type Principal,
  type PrincipalDefaults,
  type Scope,
} from '@switchyard/access';
import type { ApiKey } from '../store/entities.ts';
import type { ApiKeyWithOwners } from '../store/identity.repository.ts';
import type { OrganisationRole, WorkspaceRole } from './roles.ts';

export interface NewKeyMaterial {
  key: string;
  keyHash: string;
  keyHint: string;
}

/** A new secret key: the prefix, then 32 random bytes. Only its hash is stored. */
export function generateApiKey(prefix: string): NewKeyMaterial {
  const key = `${prefix}${randomToken(32)}`;
  return { key, ...keyMaterialOf(key, prefix) };
}

export function keyMaterialOf(key: string, prefix: string): { keyHash: string; keyHint: string } {
  return { keyHash: sha256Hex(key), keyHint: key.slice(0, prefix.length + 4) };
}

export function maskedKey(apiKey: Pick<ApiKey, 'keyHint'>): string {
  return `${apiKey.keyHint}********`;
}

export function kindFor(type: 'organisation' | 'workspace', subType: 'service' | 'user'): ApiKeyKind {
  if (type === 'organisation') return 'organisation_admin';
  return subType === 'user' ? 'workspace_user' : 'workspace_service';
}

export function toPrincipal(found: ApiKeyWithOwners): Principal {
  const { apiKey, workspaceSlug, organisationCreatedAt } = found;
  const defaults = principalDefaults(found);
  return {
    apiKeyId: apiKey.id,
    organisationId: apiKey.organisationId,
    workspaceId: apiKey.workspaceId,
    workspaceSlug,
    kind: apiKey.kind,
    scopes: apiKey.scopes,
    expiresAt: apiKey.expiresAt ? apiKey.expiresAt.getTime() : null,
    userId: apiKey.userId,
    name: apiKey.name,
    organisationCreatedAt: organisationCreatedAt.getTime(),
    ...(defaults ? { defaults } : {}),
  };
}

/**
 * What the key's requests get when they leave something out; undefined when nothing. The
 * config: the key's own default, else (a user key) the workspace's user_api_key_config, else
 * the workspace's default config. A request's own config or provider wins over all of them
 * (the gateway decides that).
 */
function principalDefaults({ apiKey, defaultConfigs }: ApiKeyWithOwners): PrincipalDefaults | undefined {
  const config =
    defaultConfigs.key ??
    (apiKey.kind === 'workspace_user' ? defaultConfigs.userKeys : null) ??
    defaultConfigs.workspace;
  const metadata = apiKey.defaultMetadata ?? {};
  if (config === null && Object.keys(metadata).length === 0 && apiKey.allowConfigOverride) return undefined;
  return { config, metadata, allowConfigOverride: apiKey.allowConfigOverride };
}

export function isUsable(apiKey: ApiKey, now = Date.now()): boolean {
  return apiKey.status === 'active' && (!apiKey.expiresAt || apiKey.expiresAt.getTime() > now);
}

/** Named rotation periods, stored and shown as their number of days. */
export const ROTATION_PERIOD_DAYS = { weekly: 7, monthly: 30 } as const;

/** A rotation policy as a request gives it: a period in days, a date for the next rotation, or both. */
export interface RotationPolicy {
  periodDays: number | null;
  nextRotationAt: Date | null;
}

const DAY_MS = 86_400_000;

/**
 * The schedule a new policy sets: its own next_rotation_at when it gives one, else one
 * period from `now`.
 */
export function rotationSchedule(
  policy: RotationPolicy,
  now: Date,
): Pick<ApiKey, 'rotationPeriodDays' | 'nextRotationAt'> {
  return {
    rotationPeriodDays: policy.periodDays,
    nextRotationAt:
      policy.nextRotationAt ?? nextRotationAfter({ rotationPeriodDays: policy.periodDays }, now),
  };
}

/**
 * When a key rotated at `now` is due again: one period after this rotation, early or late,
 * so a secret never outlives its period. A one-off next_rotation_at is used up.
 */
export function nextRotationAfter(apiKey: Pick<ApiKey, 'rotationPeriodDays'>, now: Date): Date | null {
  if (apiKey.rotationPeriodDays === null) return null;
  return new Date(now.getTime() + apiKey.rotationPeriodDays * DAY_MS);
}

/** What a user may hand to their own keys in a workspace: an organisation owner or admin is a workspace admin everywhere. */
export function userScopeCeiling(roles: {
  workspaceRole: WorkspaceRole;
  organisationRole: OrganisationRole;
}): readonly Scope[] {
  const admin = roles.organisationRole === 'owner' || roles.organisationRole === 'admin';
  return scopesForWorkspaceRole(admin ? 'admin' : roles.workspaceRole);
}

/**
 * The scopes a key of `kind` gets: those asked for, each one the kind can hold and (for a
 * user's key) within the user's role; without a request, everything allowed.
 */
export function grantedScopes(
  kind: ApiKeyKind,
  requested: readonly string[] | undefined,
  userCeiling?: readonly Scope[],
): Scope[] {
  const ceiling = userCeiling ?? scopesForKind(kind);
  if (requested === undefined) return [...ceiling];
  const allowedForKind = new Set<string>(scopesForKind(kind));
  const allowed = new Set<string>(ceiling);
  requested.forEach((scope, i) => {
    if (!isScope(scope)) {
      throw new BadRequest(`Unknown scope '${scope}'.`, { param: `scopes[${i}]`, code: 'unknown_scope' });
    }
    if (!allowedForKind.has(scope)) {
      const why =
        kind === 'organisation_admin'
          ? 'a data-plane scope: only workspace keys can hold it'
          : 'an organisation scope: only organisation admin keys can hold it';
      throw new BadRequest(`'${scope}' is ${why}.`, {
        param: `scopes[${i}]`,
        code: 'scope_not_allowed_for_key_type',
      });
    }
    if (!allowed.has(scope)) {
      throw new Forbidden(`'${scope}' is beyond the role of the key's user in this workspace.`, {
        param: `scopes[${i}]`,
        code: 'scopes_exceed_role',
      });
    }
  });
  return [...new Set(requested)] as Scope[];
}
