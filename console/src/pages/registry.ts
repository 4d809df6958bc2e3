import { lazy, type ComponentType, type LazyExoticComponent } from 'react';

export interface PageEntry {
  /** The page's path in the console (never an API prefix: /v1, /v2, /admin, /oauth, /scim, /mcp…). */
  path: string;
  title: string;
  section: 'Observe' | 'Build' | 'Govern' | 'Organisation';
  /** The page is shown when the credential holds any one of these scopes. */
  anyOf: readonly string[];
  component: LazyExoticComponent<ComponentType>;
}

/** Every page of the console, in the order the navigation lists them. */
export const pages: readonly PageEntry[] = [
  {
    path: '/',
    title: 'Overview',
    section: 'Observe',
    // The analytics API reads with the scope of listing logs.
    anyOf: ['logs.list'],
    component: lazy(() => import('./overview.tsx')),
  },
  {
    path: '/logs',
    title: 'Logs',
    section: 'Observe',
    anyOf: ['logs.list', 'logs.view'],
    component: lazy(() => import('./logs.tsx')),
  },
  {
    path: '/api-keys',
    title: 'API keys',
    section: 'Build',
    anyOf: ['api_keys.list'],
    component: lazy(() => import('./api-keys.tsx')),
  },
  {
    path: '/configs',
    title: 'Configs',
    section: 'Build',
    anyOf: ['configs.list'],
    component: lazy(() => import('./configs.tsx')),
  },
  {
    path: '/integrations',
    title: 'Integrations',
    section: 'Build',
    anyOf: ['integrations.list'],
    component: lazy(() => import('./integrations.tsx')),
  },
  {
    path: '/prompts',
    title: 'Prompts',
    section: 'Build',
    anyOf: ['prompts.list'],
    component: lazy(() => import('./prompts.tsx')),
  },
  {
    path: '/mcp-servers',
    title: 'MCP servers',
    section: 'Build',
    anyOf: ['mcp_servers.list', 'mcp_integrations.list'],
    component: lazy(() => import('./mcp.tsx')),
  },
  {
    path: '/agent-integrations',
    title: 'Agent integrations',
    section: 'Build',
    anyOf: ['agent_integrations.list'],
    component: lazy(() => import('./agent-integrations.tsx')),
  },
  {
    path: '/policies',
    title: 'Limits',
    section: 'Govern',
    anyOf: ['rate_limits.list', 'usage_limits.list'],
    component: lazy(() => import('./policies.tsx')),
  },
  {
    path: '/guardrails',
    title: 'Guardrails',
    section: 'Govern',
    anyOf: ['organisation_guardrails.list', 'organisation_settings.read', 'organisation_exclusions.list'],
    component: lazy(() => import('./guardrails.tsx')),
  },
  {
    path: '/deployments',
    title: 'Deployments',
    section: 'Govern',
    anyOf: ['deployments.list'],
    component: lazy(() => import('./deployments.tsx')),
  },
  {
    path: '/audit-log',
    title: 'Audit log',
    section: 'Govern',
    anyOf: ['audit_logs.list'],
    component: lazy(() => import('./audit-log.tsx')),
  },
  {
    path: '/settings',
    title: 'Settings',
    section: 'Organisation',
    anyOf: ['organisation_settings.read', 'workspaces.read'],
    component: lazy(() => import('./settings.tsx')),
  },
  {
    path: '/members',
    title: 'Members',
    section: 'Organisation',
    anyOf: ['organisation_users.list', 'workspace_users.list'],
    component: lazy(() => import('./members.tsx')),
  },
  {
    path: '/sso',
    title: 'SSO and SCIM',
    section: 'Organisation',
    anyOf: ['organisation_sso.read', 'organisation_email_domains.list', 'organisation_scim.read'],
    component: lazy(() => import('./sso.tsx')),
  },
];
