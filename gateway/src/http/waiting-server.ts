import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { PodHealth } from '../health.ts';
import { HTTP_ERRORS } from './errors.ts';
import { buildProbeServer } from './observability.ts';
import { sendUnavailable } from './unavailable.ts';

/**
 * What the main port serves while the gateway waits for the migration job: the probes (alive, not
 * ready) and a 503 SCHEMA_NOT_READY for everything else, so nothing touches a schema it does not fit.
 * The full app replaces it once the schema is ready.
 */
export function buildWaitingServer(deps: { logger: FastifyBaseLogger; health: PodHealth }): FastifyInstance {
  const app = buildProbeServer(deps.logger, deps.health);
  app.setNotFoundHandler(async (request, reply) => sendUnavailable(request, reply, HTTP_ERRORS.SCHEMA_NOT_READY));
  return app;
}
