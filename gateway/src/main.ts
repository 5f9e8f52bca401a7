import { pino } from 'pino';
import { configFromEnvironment } from './cli.ts';
import { collectGarbage, collectGarbageWhenResting } from './idle-garbage.ts';
import { logDestination } from './log-destination.ts';
import { SchemaIncompatibleError } from './store/schema.ts';

// Only as the entry point: scripts/warm-compile-cache.mjs imports this module to put it in Node's compile cache.
if (import.meta.main) await main();

async function main(): Promise<void> {
  // Configuration first: a bad environment is reported before the gateway's modules load.
  const config = configFromEnvironment();
  const logger = pino({ level: config.logLevel, base: { node: config.nodeName } }, logDestination());
  const { startGateway } = await import('./gateway.ts');

  try {
    const gateway = await startGateway(config, logger);
    let signalled = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (signalled) {
        logger.warn({ signal }, 'second signal: exiting now');
        process.exit(1);
      }
      signalled = true;
      logger.info({ signal }, 'stop requested');
      gateway.stop().then(
        () => process.exit(0),
        (error: unknown) => {
          logger.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    await collectGarbage();
    collectGarbageWhenResting({
      onCollected: ({ ms, cpuMs, heapBefore, heapAfter }) =>
        logger.debug(
          { ms: Math.round(ms), cpuMs: Math.round(cpuMs), heapBefore, heapAfter },
          'garbage collected at rest',
        ),
    });
  } catch (error) {
    if (error instanceof SchemaIncompatibleError) {
      // Restarting cannot help: only a gateway version that fits the schema can.
      logger.fatal(`refusing to start: ${error.message}`);
      process.exit(3);
    }
    logger.fatal({ err: error }, 'gateway failed to start');
    process.exit(1);
  }
}
