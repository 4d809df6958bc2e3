import routeTable from '../../../helm/switchyard/files/routes.json' with { type: 'json' };

/** Every Switchyard service, by the name it runs, logs and proves itself to other services as. */
export const serviceNames = ['gateway', 'control-plane', 'admin', 'policy', 'log-export'] as const;
export type ServiceName = (typeof serviceNames)[number];

export function isServiceName(value: unknown): value is ServiceName {
  return (serviceNames as readonly unknown[]).includes(value);
}

/** The web app's static files: no API, no service of the above; the table's last route. */
export const CONSOLE = 'console';

/** Where a route sends its paths: a service's API, or the console. */
export type RouteTarget = ServiceName | typeof CONSOLE;

export interface Route {
  prefix: string;
  service: RouteTarget;
  /** Matches the prefix itself only, not the paths below it (the ingress's pathType Exact). */
  exact?: boolean;
}

/** A route to a service's API. */
export type ApiRoute = Route & { service: ServiceName };

function checkedRoutes(table: ReadonlyArray<{ prefix: string; service: string; exact?: boolean }>): Route[] {
  return table.map((route, i) => {
    if (!isServiceName(route.service) && route.service !== CONSOLE) {
      throw new Error(
        `files/routes.json: route ${i} (${route.prefix}) points to unknown service ${route.service}`,
      );
    }
    return route as Route;
  });
}

/**
 * The path-prefix table the Helm ingress also reads; first match wins. A prefix matches itself
 * and the paths below it (`prefix/...`), an exact one itself only; `/` matches every path.
 */
export const routes: readonly Route[] = checkedRoutes(routeTable.routes);

/** The routes to the services' APIs, in the table's order. */
export const apiRoutes: readonly ApiRoute[] = routes.filter((route): route is ApiRoute =>
  isServiceName(route.service),
);

function matches(route: Route, path: string): boolean {
  if (path === route.prefix) return true;
  if (route.exact) return false;
  return route.prefix === '/' || path.startsWith(`${route.prefix}/`);
}

/** The route that takes a path (the first that matches), if any. */
export function routeForPath(path: string): Route | undefined {
  return routes.find((route) => matches(route, path));
}

/** The service whose API serves a path; undefined for the console's paths (and paths no route takes). */
export function serviceForPath(path: string): ServiceName | undefined {
  const target = routeForPath(path)?.service;
  return target !== undefined && isServiceName(target) ? target : undefined;
}
