import type { ApiKeyKind, Principal } from './principal.ts';
import { Forbidden } from '@switchyard/core';

/**
 * Where a scope can be held: `organisation` scopes only by organisation admin keys (they act
 * on the organisation as a whole), `workspace` scopes by any key, within its workspace. Data
 * plane scopes only by workspace keys: a model call runs in one workspace, and an
 * organisation admin key is bound to none.
 */
export type ScopeLevel = 'organisation' | 'workspace';

/** `data` scopes cover model calls through the gateway; `management` scopes everything else. */
export type ScopePlane = 'data' | 'management';

interface ScopeInfo {
  level: ScopeLevel;
  plane: ScopePlane;
}

const org = (plane: ScopePlane = 'management'): ScopeInfo => ({ level: 'organisation', plane });
const ws = (plane: ScopePlane = 'management'): ScopeInfo => ({ level: 'workspace', plane });

/**
 * Every scope a key can carry, and so every right a route can ask for. Operations that only
 * organisation admins may perform today have organisation-level scopes.
 */
const CATALOGUE = {
  // Data plane: model calls and the OpenAI-style resources behind them.
  'completions.write': ws('data'),
  'models.read': ws('data'),
  'models.write': ws('data'),
  'files.read': ws('data'),
  'files.write': ws('data'),
  'batches.read': ws('data'),
  'batches.write': ws('data'),
  'fine_tuning.read': ws('data'),
  'fine_tuning.write': ws('data'),
  'assistants.read': ws('data'),
  'assistants.write': ws('data'),
  'vector_stores.read': ws('data'),
  'vector_stores.write': ws('data'),
  'guardrails.invoke': ws('data'),
  'agents.invoke': ws('data'),

  // Workspaces.
  'workspaces.create': org(),
  'workspaces.read': ws(),
  'workspaces.list': ws(),
  'workspaces.update': org(),
  'workspaces.delete': org(),

  // API keys: a workspace key sees its workspace's keys; issuing and changing keys is the organisation's.
  'api_keys.create': org(),
  'api_keys.read': ws(),
  'api_keys.list': ws(),
  'api_keys.update': org(),
  'api_keys.delete': org(),

  // Saved configs.
  'configs.create': ws(),
  'configs.read': ws(),
  'configs.list': ws(),
  'configs.update': ws(),
  'configs.delete': ws(),

  // MCP integrations (upstream MCP servers an organisation or workspace connects) and the MCP
  // servers of a workspace the gateway serves at /mcp/{slug}: managed like saved configs.
  'mcp_integrations.create': ws(),
  'mcp_integrations.read': ws(),
  'mcp_integrations.list': ws(),
  'mcp_integrations.update': ws(),
  'mcp_integrations.delete': ws(),
  'mcp_servers.create': ws(),
  'mcp_servers.read': ws(),
  'mcp_servers.list': ws(),
  'mcp_servers.update': ws(),
  'mcp_servers.delete': ws(),

  // Saved prompts and prompt partials of a workspace (versions, rendering, sharing with other
  // workspaces of the organisation); running one through the gateway needs completions.write.
  'prompts.create': ws(),
  'prompts.read': ws(),
  'prompts.list': ws(),
  'prompts.update': ws(),
  'prompts.delete': ws(),
  'prompts.render': ws(),

  // Agent integrations (upstream A2A agents an organisation or workspace connects, described
  // by their agent cards): managed like MCP integrations.
  'agent_integrations.create': ws(),
  'agent_integrations.read': ws(),
  'agent_integrations.list': ws(),
  'agent_integrations.update': ws(),
  'agent_integrations.delete': ws(),

  // Rate-limit and usage-limit policies: a workspace key manages its workspace's, an
  // organisation admin key any workspace's and the organisation-wide ones.
  'rate_limits.create': ws(),
  'rate_limits.read': ws(),
  'rate_limits.list': ws(),
  'rate_limits.update': ws(),
  'rate_limits.delete': ws(),
  'usage_limits.create': ws(),
  'usage_limits.read': ws(),
  'usage_limits.list': ws(),
  'usage_limits.update': ws(),
  'usage_limits.delete': ws(),

  // Integrations (provider credentials).
  'integrations.create': org(),
  'integrations.read': ws(),
  'integrations.list': ws(),
  'integrations.update': org(),
  'integrations.delete': org(),
  // Which workspaces may use each organisation-level integration (changed with integrations.update).
  'integration_workspaces.read': org(),

  // Deployments: the organisation's gateway deployments and their authentication settings.
  'deployments.create': org(),
  'deployments.read': org(),
  'deployments.list': org(),
  'deployments.update': org(),
  'deployments.delete': org(),

  // Secret references: where integrations' credentials are fetched from (AWS Secrets Manager,
  // HashiCorp Vault, Azure Key Vault), with the credentials to fetch them.
  'secret_references.create': org(),
  'secret_references.read': org(),
  'secret_references.list': org(),
  'secret_references.update': org(),
  'secret_references.delete': org(),

  // People.
  'organisation_users.create': org(),
  'organisation_users.read': org(),
  'organisation_users.list': org(),
  'organisation_users.update': org(),
  'organisation_users.delete': org(),
  'workspace_users.create': org(),
  'workspace_users.read': org(),
  'workspace_users.list': org(),
  'workspace_users.update': org(),
  'workspace_users.delete': org(),

  // Request logs.
  'logs.view': ws(),
  'logs.list': ws(),
  'logs.export': ws(),
  // Feedback on requests (a value, a weight, metadata): sending it and changing what was sent.
  'feedback.write': ws(),

  // The audit log of management writes: the organisation's own record of who changed what.
  'audit_logs.list': org(),

  // Organisation-wide settings and guardrails, named by the interface.
  'organisation_settings.read': org(),
  'organisation_settings.update': org(),
  'organisation_guardrails.create': org(),
  'organisation_guardrails.read': org(),
  'organisation_guardrails.list': org(),
  'organisation_guardrails.update': org(),
  'organisation_guardrails.delete': org(),
  'organisation_exclusions.list': org(),
  'organisation_exclusions.update': org(),

  // Single sign-on: the organisation's OIDC connections and the email domains it claims.
  'organisation_sso.read': org(),
  'organisation_sso.update': org(),
  'organisation_email_domains.list': org(),
  'organisation_email_domains.create': org(),
  'organisation_email_domains.delete': org(),

  // SCIM provisioning: the organisation's SCIM token, its groups and their workspace mappings.
  'organisation_scim.read': org(),
  'organisation_scim.update': org(),
} as const satisfies Record<string, ScopeInfo>;

export type Scope = keyof typeof CATALOGUE;

export const ALL_SCOPES: readonly Scope[] = Object.keys(CATALOGUE) as Scope[];

export function isScope(value: string): value is Scope {
  return Object.hasOwn(CATALOGUE, value);
}

export function scopeLevel(scope: Scope): ScopeLevel {
  return CATALOGUE[scope].level;
}

export function scopePlane(scope: Scope): ScopePlane {
  return CATALOGUE[scope].plane;
}

/** Whether a key of `kind` can hold `scope` at all. */
export function kindCanHold(kind: ApiKeyKind, scope: Scope): boolean {
  if (kind === 'organisation_admin') return scopePlane(scope) !== 'data';
  return scopeLevel(scope) === 'workspace';
}

const ORGANISATION_ADMIN_SCOPES = ALL_SCOPES.filter((s) => kindCanHold('organisation_admin', s));
const WORKSPACE_SCOPES = ALL_SCOPES.filter((s) => kindCanHold('workspace_service', s));

export const DATA_PLANE_SCOPES: readonly Scope[] = ALL_SCOPES.filter((s) => scopePlane(s) === 'data');

/** The scopes a key of this kind can hold at all; a key without explicit scopes gets these. */
export function scopesForKind(kind: ApiKeyKind): readonly Scope[] {
  return kind === 'organisation_admin' ? ORGANISATION_ADMIN_SCOPES : WORKSPACE_SCOPES;
}

/** The scopes a workspace role grants in its workspace: the ceiling of a member's user keys. */
export function scopesForWorkspaceRole(role: 'admin' | 'manager' | 'member'): readonly Scope[] {
  switch (role) {
    // Handing out new rights (creating, changing, revoking keys; managing members) is the
    // organisation's alone today, so a manager and an admin hold the same workspace scopes.
    case 'admin':
    case 'manager':
      return WORKSPACE_SCOPES;
    case 'member':
      return [
        ...DATA_PLANE_SCOPES,
        'workspaces.read',
        'workspaces.list',
        'configs.read',
        'configs.list',
        'mcp_integrations.read',
        'mcp_integrations.list',
        'mcp_servers.read',
        'mcp_servers.list',
        'prompts.read',
        'prompts.list',
        'prompts.render',
        'agent_integrations.read',
        'agent_integrations.list',
        'rate_limits.read',
        'rate_limits.list',
        'usage_limits.read',
        'usage_limits.list',
        'integrations.read',
        'integrations.list',
        'logs.view',
        'logs.list',
        'feedback.write',
      ];
  }
}

const scopeSets = new WeakMap<readonly string[], ReadonlySet<string>>();

function scopeSetOf(scopes: readonly string[]): ReadonlySet<string> {
  let set = scopeSets.get(scopes);
  if (!set) {
    set = new Set(scopes);
    scopeSets.set(scopes, set);
  }
  return set;
}

/** Whether the key may do what `scope` covers: it holds the scope, and its kind can hold it. */
export function hasScope(principal: Principal, scope: Scope): boolean {
  return kindCanHold(principal.kind, scope) && scopeSetOf(principal.scopes).has(scope);
}

/** Throws the one 403 when the key lacks `scope`. */
export function assertScope(principal: Principal, scope: Scope): void {
  if (hasScope(principal, scope)) return;
  if (!kindCanHold(principal.kind, scope)) {
    if (principal.kind === 'organisation_admin') {
      throw new Forbidden(
        'This route needs a workspace API key; organisation admin keys are not bound to a workspace.',
        { code: 'workspace_key_required' },
      );
    }
    throw new Forbidden('This operation needs an organisation admin API key.', {
      code: 'admin_key_required',
    });
  }
  throw new Forbidden(`This API key lacks the scope '${scope}' this operation needs.`, {
    code: 'missing_scope',
  });
}
