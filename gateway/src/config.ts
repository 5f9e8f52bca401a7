import os from 'node:os';
import path from 'node:path';

/** Typed, validated gateway configuration read from the environment. Documented in README.md. */
export interface Config {
  port: number;
  host: string;
  /** Postgres connection string; unset means the embedded database in `dataDir`. */
  databaseUrl: string | undefined;
  dataDir: string;
  databasePoolMax: number;
  /** Redis connection string; unset means in-process cluster state (single pod only). */
  redisUrl: string | undefined;
  /** Prefix for every Redis key and channel, so several installs can share one Redis. */
  redisNamespace: string;
  logLevel: string;
  /** How long SIGTERM waits for in-flight requests before closing connections anyway. */
  shutdownTimeoutMs: number;
  /** Safety-net interval for re-reading options even if a bus message was missed. */
  syncIntervalMs: number;
  /** Largest JSON body accepted on /api. */
  apiBodyLimitBytes: number;
  nodeName: string;
  version: string;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

function integer(env: Env, key: string, fallback: number, min: number, max: number): number {
  const raw = env[key];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${key} must be an integer between ${min} and ${max}, got "${raw}"`);
  }
  return value;
}

function url(env: Env, key: string, protocols: string[]): string | undefined {
  const raw = env[key];
  if (raw === undefined || raw === '') return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${key} is not a valid URL`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${key} must start with ${protocols.map((p) => `${p}//`).join(' or ')}`);
  }
  return raw;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function loadConfig(env: Env = process.env, version = '0.0.0'): Config {
  const logLevel = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  }
  return {
    port: integer(env, 'PORT', 3000, 0, 65535),
    host: env.HOST || '0.0.0.0',
    databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    dataDir: path.resolve(env.DATA_DIR || './data'),
    databasePoolMax: integer(env, 'DATABASE_POOL_MAX', 20, 1, 1000),
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    redisNamespace: env.REDIS_NAMESPACE || 'tollgate',
    logLevel,
    shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 30_000, 0, 3_600_000),
    syncIntervalMs: integer(env, 'SYNC_INTERVAL_SECONDS', 60, 1, 86_400) * 1000,
    apiBodyLimitBytes: integer(env, 'API_BODY_LIMIT_KB', 1024, 1, 1_048_576) * 1024,
    nodeName: env.NODE_NAME || os.hostname(),
    version,
  };
}
