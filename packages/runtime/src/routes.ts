import routeTable from '../../../helm/switchyard/files/routes.json' with { type: 'json' };

/** Every Switchyard service, by the name it runs, logs and proves itself to other services as. */
export const serviceNames = ['gateway', 'control-plane', 'admin', 'policy', 'log-export'] as const;
export type ServiceName = (typeof serviceNames)[number];

export function isServiceName(value: unknown): value is ServiceName {
  return (serviceNames as readonly unknown[]).includes(value);
}

export interface Route {
  prefix: string;
  service: ServiceName;
  /** Matches the prefix itself only, not the paths below it (the ingress's pathType Exact). */
  exact?: boolean;
}

/**
 * The path-prefix table the Helm ingress also reads; first match wins. A prefix matches itself
 * and the paths below it (`prefix/...`), an exact one itself only.
 */
export const routes: readonly Route[] = routeTable.routes as Route[];

export function serviceForPath(path: string): ServiceName | undefined {
  for (const route of routes) {
    if (path === route.prefix || (!route.exact && path.startsWith(`${route.prefix}/`))) return route.service;
  }
  return undefined;
}
