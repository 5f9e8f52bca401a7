import os from 'node:os';
import { pino } from 'pino';
import { ConfigError, leaseLocation, loadConfig, loadScope } from './config.ts';
import { describeError, KubeClient } from './kube/client.ts';
import { loadClusterConfig } from './kube/cluster-config.ts';
import { startOperator } from './operator.ts';
import { removeFinalizers } from './remove-finalizers.ts';

const USAGE = `Usage: node operator/src/main.ts [command]

Commands:
  (none)              Run the operator: reconcile tollgate.dev resources into the gateway's database.
  remove-finalizers   Take the operator's Lease (a running operator stops reconciling), remove this
                      instance's finalizer from every tollgate.dev resource it watches, and exit 0.
                      Run before uninstalling, so that no namespace is left stuck.
  --help, -h          Print this help.

Configuration comes from the environment (operator/README.md): DATABASE_URL (required to run),
WATCH_NAMESPACES, INSTANCE_NAME, CLAIM_UNLABELLED, ACCESS_TOKEN_USERS, LEASE_NAME, POD_NAMESPACE, …
`;

/** Reads the configuration, or exits 2 naming the variable that is wrong. */
function configured<T>(load: () => T): T {
  try {
    return load();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`tollgate-operator: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
}

/** `remove-finalizers`: exits 0 when done, 1 when the API server refused or failed. */
async function runRemoveFinalizers(): Promise<void> {
  const scope = configured(() => loadScope());
  const logger = pino({ base: { component: 'operator', command: 'remove-finalizers' } });
  try {
    const kubeConfig = loadClusterConfig();
    await removeFinalizers({
      kube: new KubeClient(kubeConfig),
      scope,
      lease: { ...leaseLocation(process.env, scope), identity: `${os.hostname()}_remove-finalizers` },
      logger,
    });
    process.exit(0);
  } catch (error) {
    logger.error({ err: describeError(error) }, 'Could not remove the finalizers');
    process.exit(1);
  }
}

/** `node operator/src/main.ts`: configuration from the environment, then run until SIGTERM or SIGINT. */
async function main(): Promise<void> {
  const command = process.argv[2];
  if (command === '--help' || command === '-h') {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  if (command === 'remove-finalizers') return runRemoveFinalizers();
  if (command !== undefined) {
    process.stderr.write(`tollgate-operator: unknown command "${command}"\n\n${USAGE}`);
    process.exit(2);
  }
  const config = configured(() => loadConfig());
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
