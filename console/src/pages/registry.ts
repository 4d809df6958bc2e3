import { lazy, type ComponentType, type LazyExoticComponent } from 'react';

export interface PageEntry {
  /** The page's path in the console (never an API prefix: /v1, /v2, /admin, /oauth, /scim, /mcp…). */
  path: string;
  title: string;
  section: 'Observe' | 'Build' | 'Govern' | 'Organisation';
  /** The page is shown when the credential holds any one of these scopes. */
  anyOf: readonly string[];
  component: LazyPage;
}

type LazyPage = LazyExoticComponent<ComponentType> & { preload: () => Promise<unknown> };

/** A page loaded when first shown, or earlier by `preloadPage`. */
function lazyPage(load: () => Promise<{ default: ComponentType }>): LazyPage {
  return Object.assign(lazy(load), { preload: load });
}

/** Every page of the console, in the order the navigation lists them. */
export const pages: readonly PageEntry[] = [
  {
    path: '/',
    title: 'Overview',
    section: 'Observe',
    // The analytics API reads with the scope of listing logs.
    anyOf: ['logs.list'],
    component: lazyPage(() => import('./overview.tsx')),
  },
  {
    path: '/logs',
    title: 'Logs',
    section: 'Observe',
    anyOf: ['logs.list', 'logs.view'],
    component: lazyPage(() => import('./logs.tsx')),
  },
  {
    path: '/api-keys',
    title: 'API keys',
    section: 'Build',
    anyOf: ['api_keys.list'],
    component: lazyPage(() => import('./api-keys.tsx')),
  },
  {
    path: '/configs',
    title: 'Configs',
    section: 'Build',
    anyOf: ['configs.list'],
    component: lazyPage(() => import('./configs.tsx')),
  },
  {
    path: '/integrations',
    title: 'Integrations',
    section: 'Build',
    anyOf: ['integrations.list'],
    component: lazyPage(() => import('./integrations.tsx')),
  },
  {
    path: '/prompts',
    title: 'Prompts',
    section: 'Build',
    anyOf: ['prompts.list'],
    component: lazyPage(() => import('./prompts.tsx')),
  },
  {
    path: '/mcp-servers',
    title: 'MCP servers',
    section: 'Build',
    anyOf: ['mcp_servers.list', 'mcp_integrations.list'],
    component: lazyPage(() => import('./mcp.tsx')),
  },
  {
    path: '/agent-integrations',
    title: 'Agent integrations',
    section: 'Build',
    anyOf: ['agent_integrations.list'],
    component: lazyPage(() => import('./agent-integrations.tsx')),
  },
  {
    path: '/policies',
    title: 'Limits',
    section: 'Govern',
    anyOf: ['rate_limits.list', 'usage_limits.list'],
    component: lazyPage(() => import('./policies.tsx')),
  },
  {
    path: '/guardrails',
    title: 'Guardrails',
    section: 'Govern',
    anyOf: ['organisation_guardrails.list', 'organisation_settings.read', 'organisation_exclusions.list'],
    component: lazyPage(() => import('./guardrails.tsx')),
  },
  {
    path: '/deployments',
    title: 'Deployments',
    section: 'Govern',
    anyOf: ['deployments.list'],
    component: lazyPage(() => import('./deployments.tsx')),
  },
  {
    path: '/audit-log',
    title: 'Audit log',
    section: 'Govern',
    anyOf: ['audit_logs.list'],
    component: lazyPage(() => import('./audit-log.tsx')),
  },
  {
    path: '/settings',
    title: 'Settings',
    section: 'Organisation',
    anyOf: ['organisation_settings.read', 'workspaces.read'],
    component: lazyPage(() => import('./settings.tsx')),
  },
  {
    path: '/members',
    title: 'Members',
    section: 'Organisation',
    anyOf: ['organisation_users.list', 'workspace_users.list'],
    component: lazyPage(() => import('./members.tsx')),
  },
  {
    path: '/sso',
    title: 'SSO and SCIM',
    section: 'Organisation',
    anyOf: ['organisation_sso.read', 'organisation_email_domains.list', 'organisation_scim.read'],
    component: lazyPage(() => import('./sso.tsx')),
  },
];

/** The page at `pathname`, if the console has one. */
export function pageAt(pathname: string): PageEntry | undefined {
  return pages.find((p) =>
    p.path === '/' ? pathname === '/' : pathname === p.path || pathname.startsWith(`${p.path}/`),
  );
}

/**
 * Starts loading the code of the page at `pathname` at once, while the sign-in is checked, so
 * that the page does not wait for both one after the other. Failures show when it renders.
 */
export function preloadPage(pathname: string): void {
  pageAt(pathname)
    ?.component.preload()
    .catch(() => undefined);
}
