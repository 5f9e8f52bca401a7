import { collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** The Prometheus registry and every metric the gateway exports. One per app, so tests can build several. */
export interface Metrics {
  registry: Registry;
  httpDuration: Histogram<'route' | 'method' | 'status'>;
  /** 1 when a dependency (database, redis) answered its last check, else 0; set by PodHealth. */
  dependencyUp: Gauge<'dependency'>;
}

export function createMetrics(labels: { version: string; node: string }): Metrics {
  const registry = new Registry();
  registry.setDefaultLabels({ node: labels.node });
  collectDefaultMetrics({ register: registry });
  const httpDuration = new Histogram({
    name: 'http_server_request_duration_seconds',
    help: 'Duration of HTTP requests served by the gateway, by route template, method and status code.',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  // Constant 1, labelled with the version: dashboards join on it to show which pods run what.
  new Gauge({
    name: 'tollgate_build_info',
    help: 'Build information of the running gateway; always 1.',
    labelNames: ['version'] as const,
    registers: [registry],
  }).set({ version: labels.version }, 1);
  const dependencyUp = new Gauge({
    name: 'tollgate_dependency_up',
    help: 'Whether a dependency of the gateway (database, redis) answered its last health check: 1 or 0.',
    labelNames: ['dependency'] as const,
    registers: [registry],
  });
  return { registry, httpDuration, dependencyUp };
}

/**
 * A metric's children by their label values, each made on first use. prom-client's `labels()` binds
 * the label object once; calling `inc`/`observe` with an object instead builds one (and, for a
 * histogram, a closure) on every call.
 */
export function labelled<T>(make: (...values: string[]) => T): (...values: string[]) => T {
  const children = new Map<string, T>();
  return (...values) => {
    const key = values.join('\u0000');
    let child = children.get(key);
    if (child === undefined) {
      child = make(...values);
      children.set(key, child);
    }
    return child;
  };
}
