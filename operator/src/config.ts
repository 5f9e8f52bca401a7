import { readFileSync } from 'node:fs';
import os from 'node:os';

/** The operator's configuration, read once from the environment at start (see operator/README.md). */
/** Which resources this operator instance watches and owns (also all `remove-finalizers` needs). */
export interface OperatorScope {
  /** Namespaces to watch; empty means every namespace. */
  watchNamespaces: string[];
  /** Resources labelled `tollgate.dev/instance` with this value are this instance's. */
  instance: string;
  /** Whether resources without the instance label are this instance's too. */
  claimUnlabelled: boolean;
}

/** AccessToken user policy: namespace (or `*`) -> the users an AccessToken there may mint keys for. */
export type AccessTokenUsers = Readonly<Record<string, readonly string[]>>;

export interface OperatorConfig extends OperatorScope {
  accessTokenUsers: AccessTokenUsers;
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

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** A label value; at most 53 characters so that the instance's finalizer name stays a valid name. */
const INSTANCE = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,51}[A-Za-z0-9])?$/;

function namespaces(env: NodeJS.ProcessEnv, name: string): string[] {
  const listed = (env[name] ?? '')
    .split(',')
    .map((ns) => ns.trim())
    .filter((ns) => ns !== '');
  for (const ns of listed) {
    if (ns.length > 63 || !DNS_LABEL.test(ns)) throw new ConfigError(`${name}: "${ns}" is not a namespace name`);
  }
  return [...new Set(listed)];
}

/** ACCESS_TOKEN_USERS: a JSON object of namespace (or "*") -> array of user names. */
function accessTokenUsers(env: NodeJS.ProcessEnv): AccessTokenUsers {
  const raw = env.ACCESS_TOKEN_USERS?.trim();
  if (!raw) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError('ACCESS_TOKEN_USERS must be JSON: an object of namespace -> array of user names');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigError('ACCESS_TOKEN_USERS must be an object of namespace -> array of user names');
  }
  const users: Record<string, string[]> = {};
  for (const [namespace, list] of Object.entries(parsed)) {
    if (!Array.isArray(list) || !list.every((user) => typeof user === 'string' && user.trim() !== '')) {
      throw new ConfigError(`ACCESS_TOKEN_USERS["${namespace}"] must be an array of user names`);
    }
    users[namespace] = list.map((user: string) => user.trim());
  }
  return users;
}

/** The watch scope and instance ownership from the environment. */
export function loadScope(env: NodeJS.ProcessEnv = process.env): OperatorScope {
  const instance = env.INSTANCE_NAME?.trim() || 'tollgate';
  if (!INSTANCE.test(instance)) {
    throw new ConfigError(`INSTANCE_NAME must be a label value of at most 53 characters, got "${instance}"`);
  }
  return {
    watchNamespaces: namespaces(env, 'WATCH_NAMESPACES'),
    instance,
    claimUnlabelled: boolean(env, 'CLAIM_UNLABELLED', true),
  };
}

function inClusterNamespace(readFile: (path: string) => string): string | undefined {
  try {
    return readFile(SERVICE_ACCOUNT_NAMESPACE).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Where the leader-election Lease lives: POD_NAMESPACE, the service account's namespace, or the first watched one. */
export function leaseLocation(
  env: NodeJS.ProcessEnv,
  scope: OperatorScope,
  readFile: (path: string) => string = (path) => readFileSync(path, 'utf8'),
): { namespace: string; name: string } {
  return {
    namespace: env.POD_NAMESPACE?.trim() || inClusterNamespace(readFile) || scope.watchNamespaces[0] || 'default',
    name: env.LEASE_NAME?.trim() || 'tollgate-operator',
  };
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
  const scope = loadScope(env);
  const lease = leaseLocation(env, scope, readFile);
  const podName = env.POD_NAME?.trim() || os.hostname();
  return {
    ...scope,
    accessTokenUsers: accessTokenUsers(env),
    databaseUrl,
    databasePoolMax: integer(env, 'DATABASE_POOL_MAX', 5, 1, 100),
    redisUrl,
    redisNamespace: env.REDIS_NAMESPACE?.trim() || 'tollgate',
    secretKey,
    identity: `${podName}_${suffix}`,
    leaseNamespace: lease.namespace,
    leaseName: lease.name,
    leaderElection: boolean(env, 'LEADER_ELECTION', true),
    gatewayBaseUrl,
    resyncMs: integer(env, 'RESYNC_SECONDS', 300, 1, 86_400) * 1000,
    metricsPort: integer(env, 'METRICS_PORT', 8081, 0, 65_535),
    metricsHost: env.METRICS_HOST?.trim() || '0.0.0.0',
    logLevel,
    workers: integer(env, 'RECONCILE_WORKERS', 2, 1, 16),
  };
}
