import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../metrics.ts';

export interface ReadinessCheck {
  name: string;
  check(): Promise<void>;
}

export interface ObservabilityOptions {
  metrics: Metrics;
  checks: ReadinessCheck[];
  /** True once shutdown has begun: readiness fails so the load balancer stops sending traffic. */
  isDraining(): boolean;
  checkTimeoutMs?: number;
}

/**
 * /healthz (liveness: the process answers, touches nothing), /readyz (every dependency answers)
 * and /metrics, plus the request-duration histogram for every route.
 */
export function registerObservability(app: FastifyInstance, options: ObservabilityOptions): void {
  const { metrics, checks } = options;
  const timeoutMs = options.checkTimeoutMs ?? 2000;

  app.addHook('onResponse', async (request, reply) => {
    // The route template, never the raw URL: unmatched paths share one label so probing can't explode cardinality.
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.httpDuration.observe(
      { route, method: request.method, status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });

  app.get('/healthz', { logLevel: 'warn' }, async () => ({ status: 'ok' }));

  app.get('/readyz', { logLevel: 'warn' }, async (_request, reply) => {
    const results: Record<string, string> = {};
    await Promise.all(
      checks.map(async ({ name, check }) => {
        try {
          await withTimeout(check(), timeoutMs);
          results[name] = 'ok';
        } catch (error) {
          results[name] = error instanceof Error ? error.message : String(error);
        }
      }),
    );
    const draining = options.isDraining();
    const ready = !draining && Object.values(results).every((r) => r === 'ok');
    reply.code(ready ? 200 : 503);
    return { status: ready ? 'ok' : draining ? 'draining' : 'unavailable', checks: results };
  });

  app.get('/metrics', { logLevel: 'warn' }, async (_request, reply) => {
    reply.header('content-type', metrics.registry.contentType);
    return metrics.registry.metrics();
  });
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
