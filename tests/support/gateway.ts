import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { inject } from 'vitest';
import { loadConfig } from '../../gateway/src/config.ts';
import { type Gateway, startGateway } from '../../gateway/src/gateway.ts';
import type { StoreOptions } from '../../gateway/src/store/index.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Whether tests run against a real Redis (as opposed to in-process cluster state). */
export const hasRedis = (): boolean => inject('redisUrl') !== undefined;

/** A random Redis namespace, so test files sharing one Redis never see each other's keys or messages. */
export const testNamespace = () => `tollgate-test-${randomBytes(4).toString('hex')}`;

/** Environment for a gateway on the given store and (if the tests have one) the test Redis. */
export function gatewayEnv(store: StoreOptions, namespace: string, extra: Record<string, string> = {}) {
  const redisUrl = inject('redisUrl');
  return {
    PORT: '0',
    METRICS_PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    REDIS_NAMESPACE: namespace,
    ...('databaseUrl' in store ? { DATABASE_URL: store.databaseUrl } : { DATA_DIR: store.dataDir }),
    ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
    ...extra,
  };
}

/** The gateway in this test process, listening on a free loopback port. */
export function startTestGateway(env: Record<string, string>): Promise<Gateway> {
  return startGateway(loadConfig(env, 'test'), pino({ level: 'silent' }));
}

export interface GatewayProcess {
  child: ChildProcess;
  url: string;
  /** The private listener: /metrics, /health/details and the probes. */
  metricsUrl: string;
  /** Every JSON log line so far. */
  logs: Array<Record<string, unknown>>;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** What to start: the repository's gateway by default; tests/k8s/images.test.ts starts a replayed image's CMD. */
export interface GatewayLaunch {
  argv: string[];
  cwd: string;
  /** Run as this user (only when the tests run as root). */
  user?: { uid: number; gid: number } | undefined;
}

/**
 * Runs `node gateway/src/main.ts` as a real process, as `npm start` does, and waits until it listens.
 * Its private listener takes a free port unless `env` names one.
 */
export function spawnGateway(
  env: Record<string, string>,
  timeoutMs = 45_000,
  launch: GatewayLaunch = { argv: [process.execPath, path.join(root, 'gateway/src/main.ts')], cwd: root },
): Promise<GatewayProcess> {
  const [command, ...args] = launch.argv as [string, ...string[]];
  const child = spawn(command, args, {
    cwd: launch.cwd,
    env: { PATH: process.env.PATH ?? '', METRICS_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...launch.user,
  });
  const logs: Array<Record<string, unknown>> = [];
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`gateway did not start within ${timeoutMs} ms; stderr: ${stderr}`));
    }, timeoutMs);
    let buffered = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        if (!line.trim()) continue;
        const entry = JSON.parse(line) as Record<string, unknown>;
        logs.push(entry);
        if (entry.msg === 'gateway listening') {
          clearTimeout(timer);
          resolve({
            child,
            url: String(entry.url),
            metricsUrl: String(entry.metricsUrl),
            logs,
            stop: (signal = 'SIGTERM') => {
              child.kill(signal);
              return exited;
            },
          });
        }
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      const last = JSON.stringify(logs.at(-1) ?? {});
      reject(new Error(`gateway exited with ${code} before listening; last log: ${last}; stderr: ${stderr}`));
    });
  });
}
