import routeTable from '../../../helm/switchyard/files/routes.json' with { type: 'json' };

export type ServiceName = 'gateway' | 'control-plane' | 'admin' | 'policy' | 'log-export';

export interface Route {
  prefix: string;
  service: ServiceName;
}

/** The path-prefix table the Helm ingress also reads; first match wins. */
export const routes: readonly Route[] = routeTable.routes as Route[];

export function serviceForPath(path: string): ServiceName | undefined {
  for (const route of routes) {
    if (path === route.prefix || path.startsWith(`${route.prefix}/`)) return route.service;
  }
  return undefined;
}
