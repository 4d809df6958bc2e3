/**
 * The scopes an API key can hold, as data: a copy of the catalogue in
 * packages/access/src/scopes.ts (no API route lists it). console/test/build.test.ts fails when
 * the two differ, so a scope added there is added here too. Each: name, level, plane.
 * Organisation admin keys hold any management scope; workspace keys any workspace-level one.
 */
export type ScopeLevel = 'organisation' | 'workspace';
export type ScopePlane = 'data' | 'management';

export const SCOPE_CATALOGUE: readonly (readonly [name: string, level: ScopeLevel, plane: ScopePlane])[] = [
  ['completions.write', 'workspace', 'data'],
  ['models.read', 'workspace', 'data'],
  ['models.write', 'workspace', 'data'],
  ['files.read', 'workspace', 'data'],
  ['files.write', 'workspace', 'data'],
  ['batches.read', 'workspace', 'data'],
  ['batches.write', 'workspace', 'data'],
  ['fine_tuning.read', 'workspace', 'data'],
  ['fine_tuning.write', 'workspace', 'data'],
  ['assistants.read', 'workspace', 'data'],
  ['assistants.write', 'workspace', 'data'],
  ['vector_stores.read', 'workspace', 'data'],
  ['vector_stores.write', 'workspace', 'data'],
  ['guardrails.invoke', 'workspace', 'data'],
  ['agents.invoke', 'workspace', 'data'],
  ['workspaces.create', 'organisation', 'management'],
  ['workspaces.read', 'workspace', 'management'],
  ['workspaces.list', 'workspace', 'management'],
  ['workspaces.update', 'organisation', 'management'],
  ['workspaces.delete', 'organisation', 'management'],
  ['api_keys.create', 'organisation', 'management'],
  ['api_keys.read', 'workspace', 'management'],
  ['api_keys.list', 'workspace', 'management'],
  ['api_keys.update', 'organisation', 'management'],
  ['api_keys.delete', 'organisation', 'management'],
  ['configs.create', 'workspace', 'management'],
  ['configs.read', 'workspace', 'management'],
  ['configs.list', 'workspace', 'management'],
  ['configs.update', 'workspace', 'management'],
  ['configs.delete', 'workspace', 'management'],
  ['mcp_integrations.create', 'workspace', 'management'],
  ['mcp_integrations.read', 'workspace', 'management'],
  ['mcp_integrations.list', 'workspace', 'management'],
  ['mcp_integrations.update', 'workspace', 'management'],
  ['mcp_integrations.delete', 'workspace', 'management'],
  ['mcp_servers.create', 'workspace', 'management'],
  ['mcp_servers.read', 'workspace', 'management'],
  ['mcp_servers.list', 'workspace', 'management'],
  ['mcp_servers.update', 'workspace', 'management'],
  ['mcp_servers.delete', 'workspace', 'management'],
  ['prompts.create', 'workspace', 'management'],
  ['prompts.read', 'workspace', 'management'],
  ['prompts.list', 'workspace', 'management'],
  ['prompts.update', 'workspace', 'management'],
  ['prompts.delete', 'workspace', 'management'],
  ['prompts.render', 'workspace', 'management'],
  ['agent_integrations.create', 'workspace', 'management'],
  ['agent_integrations.read', 'workspace', 'management'],
  ['agent_integrations.list', 'workspace', 'management'],
  ['agent_integrations.update', 'workspace', 'management'],
  ['agent_integrations.delete', 'workspace', 'management'],
  ['rate_limits.create', 'workspace', 'management'],
  ['rate_limits.read', 'workspace', 'management'],
  ['rate_limits.list', 'workspace', 'management'],
  ['rate_limits.update', 'workspace', 'management'],
  ['rate_limits.delete', 'workspace', 'management'],
  ['usage_limits.create', 'workspace', 'management'],
  ['usage_limits.read', 'workspace', 'management'],
  ['usage_limits.list', 'workspace', 'management'],
  ['usage_limits.update', 'workspace', 'management'],
  ['usage_limits.delete', 'workspace', 'management'],
  ['integrations.create', 'organisation', 'management'],
  ['integrations.read', 'workspace', 'management'],
  ['integrations.list', 'workspace', 'management'],
  ['integrations.update', 'organisation', 'management'],
  ['integrations.delete', 'organisation', 'management'],
  ['integration_workspaces.read', 'organisation', 'management'],
  ['deployments.create', 'organisation', 'management'],
  ['deployments.read', 'organisation', 'management'],
  ['deployments.list', 'organisation', 'management'],
  ['deployments.update', 'organisation', 'management'],
  ['deployments.delete', 'organisation', 'management'],
  ['secret_references.create', 'organisation', 'management'],
  ['secret_references.read', 'organisation', 'management'],
  ['secret_references.list', 'organisation', 'management'],
  ['secret_references.update', 'organisation', 'management'],
  ['secret_references.delete', 'organisation', 'management'],
  ['organisation_users.create', 'organisation', 'management'],
  ['organisation_users.read', 'organisation', 'management'],
  ['organisation_users.list', 'organisation', 'management'],
  ['organisation_users.update', 'organisation', 'management'],
  ['organisation_users.delete', 'organisation', 'management'],
  ['workspace_users.create', 'organisation', 'management'],
  ['workspace_users.read', 'organisation', 'management'],
  ['workspace_users.list', 'organisation', 'management'],
  ['workspace_users.update', 'organisation', 'management'],
  ['workspace_users.delete', 'organisation', 'management'],
  ['logs.view', 'workspace', 'management'],
  ['logs.list', 'workspace', 'management'],
  ['logs.export', 'workspace', 'management'],
  ['feedback.write', 'workspace', 'management'],
  ['audit_logs.list', 'organisation', 'management'],
  ['organisation_settings.read', 'organisation', 'management'],
  ['organisation_settings.update', 'organisation', 'management'],
  ['organisation_guardrails.create', 'organisation', 'management'],
  ['organisation_guardrails.read', 'organisation', 'management'],
  ['organisation_guardrails.list', 'organisation', 'management'],
  ['organisation_guardrails.update', 'organisation', 'management'],
  ['organisation_guardrails.delete', 'organisation', 'management'],
  ['organisation_exclusions.list', 'organisation', 'management'],
  ['organisation_exclusions.update', 'organisation', 'management'],
  ['organisation_sso.read', 'organisation', 'management'],
  ['organisation_sso.update', 'organisation', 'management'],
  ['organisation_email_domains.list', 'organisation', 'management'],
  ['organisation_email_domains.create', 'organisation', 'management'],
  ['organisation_email_domains.delete', 'organisation', 'management'],
  ['organisation_scim.read', 'organisation', 'management'],
  ['organisation_scim.update', 'organisation', 'management'],
];

export type KeyKind = 'organisation/service' | 'workspace/service' | 'workspace/user';

/** Whether a key of this kind can hold the scope at all (as kindCanHold in packages/access). */
export function kindCanHold(kind: KeyKind, level: ScopeLevel, plane: ScopePlane): boolean {
  return kind === 'organisation/service' ? plane !== 'data' : level === 'workspace';
}

/** What a scope's area is called: `api_keys.create` → `API keys`. */
export function scopeArea(scope: string, plane: ScopePlane): string {
  if (plane === 'data') return 'Model calls (data plane)';
  const area = scope.slice(0, scope.indexOf('.'));
  const named: Record<string, string> = {
    api_keys: 'API keys',
    mcp_integrations: 'MCP integrations',
    mcp_servers: 'MCP servers',
    audit_logs: 'Audit log',
    scim: 'SCIM',
    sso: 'SSO',
  };
  if (named[area]) return named[area];
  const words = area.replace(/^organisation_/, 'organisation ').replaceAll('_', ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** The scopes a key of `kind` can hold, grouped by area in catalogue order. */
export function scopesByArea(kind: KeyKind): { area: string; scopes: string[] }[] {
  const groups = new Map<string, string[]>();
  for (const [name, level, plane] of SCOPE_CATALOGUE) {
    if (!kindCanHold(kind, level, plane)) continue;
    const area = scopeArea(name, plane);
    groups.set(area, [...(groups.get(area) ?? []), name]);
  }
  return [...groups].map(([area, scopes]) => ({ area, scopes }));
}
