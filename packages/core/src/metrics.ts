import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  registry: Registry;
  httpRequests: Counter<'service' | 'method' | 'route' | 'status'>;
  httpDuration: Histogram<'service' | 'method' | 'route'>;
}

/** One registry per process; in all-in-one mode every service labels its own series. */
export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    httpRequests: new Counter({
      name: 'switchyard_http_requests_total',
      help: 'HTTP requests served, by status.',
      labelNames: ['service', 'method', 'route', 'status'],
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'switchyard_http_request_duration_seconds',
      help: 'HTTP request duration until the response finished.',
      labelNames: ['service', 'method', 'route'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    }),
  };
}
