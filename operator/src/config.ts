import { readFileSync } from 'node:fs';
import os from 'node:os';

/** The operator's configuration, read once from the environment at start (see operator/README.md). */
export interface OperatorConfig {
  /** Namespace to watch; undefined means every namespace. */
  watchNamespace: string | undefined;
  databaseUrl: string;
  databasePoolMax: number;
  /** Unset: an in-process bus, which no gateway pod hears (fine for tests of the operator alone). */
  redisUrl: string | undefined;
  redisNamespace: string;
  /** The gateway's SECRET_KEY; unset means the key the gateway generated and keeps in the database. */
  secretKey: string | undefined;
  /** This process's identity in the Lease: the pod name plus a random suffix, unique per process. */
  identity: string;
  /** Namespace of the leader-election Lease. */
  leaseNamespace: string;
  leaseName: string;
  leaderElection: boolean;
  /** Written into AccessToken Secrets as `baseURL`. */
  gatewayBaseUrl: string;
  resyncMs: number;
  metricsPort: number;
  metricsHost: string;
  logLevel: string;
  /** Reconciles running at once (different resources; one resource is never reconciled twice at once). */
  workers: number;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const SERVICE_ACCOUNT_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

function boolean(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (!raw) return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function inClusterNamespace(readFile: (path: string) => string): string | undefined {
  try {
    return readFile(SERVICE_ACCOUNT_NAMESPACE).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Environment -> configuration; an invalid value throws a ConfigError naming the variable. */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  readFile: (path: string) => string = (path) => readFileSync(path, 'utf8'),
  suffix: string = Math.random().toString(36).slice(2, 8),
): OperatorConfig {
  const databaseUrl = env.DATABASE_URL?.trim();
  if (!databaseUrl) throw new ConfigError('DATABASE_URL is required: the operator writes into the gateway database');
  if (!/^postgres(ql)?:\/\//.test(databaseUrl)) throw new ConfigError('DATABASE_URL must be a postgres:// URL');
  const redisUrl = env.REDIS_URL?.trim() || undefined;
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl))
    throw new ConfigError('REDIS_URL must be a redis:// or rediss:// URL');
  const secretKey = env.SECRET_KEY || undefined;
  if (secretKey !== undefined && secretKey.length < 16)
    throw new ConfigError('SECRET_KEY must be at least 16 characters long');
  const logLevel = env.LOG_LEVEL?.trim() || 'info';
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  const gatewayBaseUrl = env.GATEWAY_BASE_URL?.trim().replace(/\/+$/, '') ?? '';
  if (gatewayBaseUrl && !/^https?:\/\/[^/?# ]+/.test(gatewayBaseUrl)) {
    throw new ConfigError('GATEWAY_BASE_URL must be an http:// or https:// URL');
  }
  const watchNamespace = env.WATCH_NAMESPACE?.trim() || undefined;
  const podName = env.POD_NAME?.trim() || os.hostname();
  return {
    watchNamespace,
    databaseUrl,
    databasePoolMax: integer(env, 'DATABASE_POOL_MAX', 5, 1, 100),
    redisUrl,
    redisNamespace: env.REDIS_NAMESPACE?.trim() || 'tollgate',
    secretKey,
    identity: `${podName}_${suffix}`,
    leaseNamespace: env.POD_NAMESPACE?.trim() || inClusterNamespace(readFile) || watchNamespace || 'default',
    leaseName: env.LEASE_NAME?.trim() || 'tollgate-operator',
    leaderElection: boolean(env, 'LEADER_ELECTION', true),
    gatewayBaseUrl,
    resyncMs: integer(env, 'RESYNC_SECONDS', 300, 1, 86_400) * 1000,
    metricsPort: integer(env, 'METRICS_PORT', 8081, 0, 65_535),
    metricsHost: env.METRICS_HOST?.trim() || '0.0.0.0',
    logLevel,
    workers: integer(env, 'RECONCILE_WORKERS', 2, 1, 16),
  };
}
