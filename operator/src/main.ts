import { pino } from 'pino';
import { ConfigError, loadConfig } from './config.ts';
import { startOperator } from './operator.ts';

/** `node operator/src/main.ts`: configuration from the environment, then run until SIGTERM or SIGINT. */
async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`tollgate-operator: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const logger = pino({ level: config.logLevel, base: { component: 'operator', identity: config.identity } });
  process.on('unhandledRejection', (reason) => {
    logger.error({ err: reason instanceof Error ? reason.message : String(reason) }, 'Unhandled rejection');
  });

  const operator = await startOperator(config, logger).catch((error: unknown) => {
    logger.fatal({ err: error instanceof Error ? error.message : String(error) }, 'Operator failed to start');
    process.exit(1);
  });

  let signals = 0;
  const shutdown = (signal: NodeJS.Signals) => {
    signals++;
    if (signals > 1) {
      logger.warn({ signal }, 'Second signal: exiting at once');
      process.exit(1);
    }
    logger.info({ signal }, 'Shutting down');
    // A stop that hangs (an API server that never answers) must not keep the pod terminating forever.
    setTimeout(() => {
      logger.error({}, 'Shutdown took too long; exiting');
      process.exit(1);
    }, 20_000).unref();
    operator
      .stop()
      .then(() => {
        logger.info({}, 'Shutdown complete');
        process.exit(0);
      })
      .catch((error: unknown) => {
        logger.error({ err: error instanceof Error ? error.message : String(error) }, 'Shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}

await main();
