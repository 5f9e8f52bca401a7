import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';

export interface ShutdownStep {
  name: string;
  run(): Promise<void>;
}

export interface ShutdownPlan {
  app: FastifyInstance;
  logger: Logger;
  /** How long in-flight requests may take to finish before their connections are closed. */
  drainTimeoutMs: number;
  /** Called first, so readiness fails and no new traffic is routed here. */
  onDrainStart(): void;
  /**
   * Called when the drain timeout runs out, before the remaining connections are closed: open streams
   * end in their client's format (relay/exchange/stream-drain.ts) and get a moment to write it.
   */
  onDrainTimeout?(): void;
  /** Run in order once HTTP is drained: flush queues first, then close pools. */
  steps: ShutdownStep[];
}

/**
 * Stops the gateway the way Kubernetes expects on SIGTERM: stop accepting, let in-flight requests
 * finish (up to the drain timeout), flush what is queued, close pools. Idempotent: a second call
 * waits for the first.
 */
export function shutdownOnce(plan: ShutdownPlan): () => Promise<void> {
  let running: Promise<void> | undefined;
  return () => {
    running ??= shutdown(plan);
    return running;
  };
}

/** How long streams ended at the drain timeout have to write their ending before connections are closed. */
const ENDING_GRACE_MS = 1_000;

async function shutdown({
  app,
  logger,
  drainTimeoutMs,
  onDrainStart,
  onDrainTimeout,
  steps,
}: ShutdownPlan): Promise<void> {
  onDrainStart();
  logger.info({ drainTimeoutMs }, 'shutting down: draining in-flight requests');
  const closed = app.close();
  // Keep-alive connections whose last response finished after close() began would otherwise hold the
  // server open until their idle timeout: close each as soon as it goes idle.
  const sweeper = setInterval(() => app.server.closeIdleConnections(), 50);
  let grace: NodeJS.Timeout | undefined;
  const timer = setTimeout(() => {
    logger.warn('drain timeout reached: ending open streams, closing remaining connections');
    onDrainTimeout?.();
    grace = setTimeout(() => app.server.closeAllConnections(), onDrainTimeout ? ENDING_GRACE_MS : 0);
  }, drainTimeoutMs);
  try {
    await closed;
  } finally {
    clearInterval(sweeper);
    clearTimeout(timer);
    clearTimeout(grace);
  }
  for (const step of steps) {
    try {
      await step.run();
    } catch (error) {
      // A failing step must not keep the others (closing pools) from running.
      logger.error({ err: error, step: step.name }, 'shutdown step failed');
    }
  }
  logger.info('shutdown complete');
}
