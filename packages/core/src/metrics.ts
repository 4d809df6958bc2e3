import {
  Counter,
  type CounterConfiguration,
  Histogram,
  type HistogramConfiguration,
  Registry,
  collectDefaultMetrics,
} from 'prom-client';

export interface Metrics {
  registry: Registry;
  httpRequests: Counter<'service' | 'method' | 'route' | 'status' | 'status_class'>;
  httpDuration: Histogram<'service' | 'method' | 'route' | 'status_class'>;
}

const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'];

/** The class a status is counted under beside the status itself: `2xx`, `4xx`, `5xx`, … */
export function statusClass(status: number): string {
  return STATUS_CLASSES[Math.floor(status / 100) - 1] ?? 'other';
}

const ROUTE_TEMPLATE = Symbol('switchyard.routeTemplate');

/**
 * Names the route template a response is counted under when the router's own pattern is not
 * one (a route matched by a regular expression, or a request refused before its route ran,
 * such as a 401). The template must come from a fixed set, never from the request's path.
 */
export function labelRoute(res: object, template: string): void {
  (res as { [ROUTE_TEMPLATE]?: string })[ROUTE_TEMPLATE] = template;
}

/** The route template a response was labelled with (labelRoute), if any. */
export function labelledRoute(res: object): string | undefined {
  return (res as { [ROUTE_TEMPLATE]?: string })[ROUTE_TEMPLATE];
}

/** One registry per process; in all-in-one mode every service labels its own series. */
export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    httpRequests: new Counter({
      name: 'switchyard_http_requests_total',
      help: 'HTTP requests served, by route template, status and status class (2xx, 4xx, 5xx).',
      labelNames: ['service', 'method', 'route', 'status', 'status_class'],
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'switchyard_http_request_duration_seconds',
      help: 'HTTP request duration until the response finished, by route template and status class.',
      labelNames: ['service', 'method', 'route', 'status_class'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    }),
  };
}

/**
 * The counter of this name on the registry, made on first use: a series is registered once per
 * registry however often a service is created on it (all-in-one, tests).
 */
export function counterOnce<T extends string>(
  registry: Registry,
  configuration: CounterConfiguration<T>,
): Counter<T> {
  const existing = registry.getSingleMetric(configuration.name) as Counter<T> | undefined;
  return existing ?? new Counter({ ...configuration, registers: [registry] });
}

/** The histogram of this name on the registry, made on first use (see counterOnce). */
export function histogramOnce<T extends string>(
  registry: Registry,
  configuration: HistogramConfiguration<T>,
): Histogram<T> {
  const existing = registry.getSingleMetric(configuration.name) as Histogram<T> | undefined;
  return existing ?? new Histogram({ ...configuration, registers: [registry] });
}
