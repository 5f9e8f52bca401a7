import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { PodHealth } from '../health.ts';
import { histogramSeries, type Metrics } from '../metrics.ts';

/**
 * /healthz (liveness: the process answers, touches nothing) and /readyz (the pod's own readiness, status
 * only). Every listener serves these; dependency details and /metrics live on the private listener only.
 */
export function registerProbes(app: FastifyInstance, health: PodHealth): void {
  app.get('/healthz', { logLevel: 'warn' }, async () => ({ status: 'ok' }));
  app.get('/readyz', { logLevel: 'warn' }, async (_request, reply) => {
    const status = health.readiness();
    reply.code(status === 'ok' ? 200 : 503);
    return { status };
  });
}

/** The request-duration histogram for every route of the app it is added to. */
export function measureRequests(app: FastifyInstance, metrics: Metrics): void {
  const series = histogramSeries(metrics.httpDuration, ['route', 'method', 'status']);
  // A callback hook: an async one would cost a promise and a microtask per request.
  app.addHook('onResponse', (request, reply, done) => {
    // The route template, never the raw URL: unmatched paths share one label so probing can't explode cardinality.
    const route = request.routeOptions.url ?? 'unmatched';
    series(route, request.method, String(reply.statusCode)).observe(reply.elapsedTime / 1000);
    done();
  });
}

/** A small server with only the probes, which the private and the waiting listeners build on. */
export function buildProbeServer(logger: FastifyBaseLogger, health: PodHealth): FastifyInstance {
  const app = Fastify({
    loggerInstance: logger,
    logController: new LogController({ disableRequestLogging: true }),
    // Probes and scrapes keep no state: stopping never waits for their kept-alive connections.
    forceCloseConnections: true,
  });
  registerProbes(app, health);
  return app;
}
