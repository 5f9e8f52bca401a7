import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { PodHealth } from '../health.ts';
import type { Metrics } from '../metrics.ts';
import { buildProbeServer } from './observability.ts';

/**
 * The private listener (METRICS_PORT): /metrics, /health/details and the probes, for Prometheus, the
 * kubelet and operators. Never behind the user-facing Service or Ingress, so it may say what is broken.
 */
export function buildPrivateServer(deps: {
  logger: FastifyBaseLogger;
  metrics: Metrics;
  health: PodHealth;
}): FastifyInstance {
  const app = buildProbeServer(deps.logger, deps.health);
  // Always 200: it informs; the probes decide.
  app.get('/health/details', async () => deps.health.details());
  app.get('/metrics', async (_request, reply) => {
    // Checked at scrape time, so tollgate_dependency_up is as fresh as the scrape.
    await deps.health.details();
    reply.header('content-type', deps.metrics.registry.contentType);
    return deps.metrics.registry.metrics();
  });
  return app;
}
