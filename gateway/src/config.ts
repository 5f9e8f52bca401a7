import os from 'node:os';
import path from 'node:path';

/** Typed, validated gateway configuration read from the environment. Documented in README.md. */
export interface Config {
  port: number;
  host: string;
  /** The private listener for /metrics, /health/details and the probes; never exposed to users. */
  metricsPort: number;
  metricsHost: string;
  /** Apply pending migrations at start (the default); false waits for the chart's migration job instead. */
  migrateOnStart: boolean;
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
  /** Base secret for HMAC lookups and encryption at rest; unset means one generated and kept in the database. */
  secretKey: string | undefined;
  /** Fastify's trustProxy: whether (or which hops) to trust X-Forwarded-* for client IP and protocol. */
  trustProxy: boolean | string[];
  sessionTtlMs: number;
  /** At most `count` notifications of one kind per user per window. */
  notifyLimit: { count: number; windowMs: number };
  /** Where Turnstile tokens are verified (Cloudflare's siteverify; a local fake in tests). */
  turnstileVerifyUrl: string;
  /** Third-party sign-in: provider addresses (local fakes in tests) and the limit on each outbound call. */
  oauth: OAuthEndpoints;
  rateLimits: {
    /** Every /api call, per client IP. */
    globalApi: RateLimit;
    /** Sign-in, registration, password reset, verification mail, OAuth, per client IP. */
    critical: RateLimit;
  };
  relay: {
    bodyLimitBytes: number;
    /** Longest wait for an upstream's response headers. */
    headersTimeoutMs: number;
    /** Longest silence between two chunks of an upstream's answer (new-api's STREAMING_TIMEOUT). */
    idleTimeoutMs: number;
    connectionsPerOrigin: number;
    /** Write error logs (type 5) for failed relay requests, as new-api's ERROR_LOG_ENABLED. */
    errorLogEnabled: boolean;
  };
  /** Quota leases (domain/ledger): how long a dead pod's lease lives, and how the sweeper returns it. */
  quotaLeases: {
    /** A lease row not renewed for this long expires (its holder renews it every third of it). */
    ttlMs: number;
    /** How often one pod looks for expired leases. */
    sweepIntervalMs: number;
    /** How long past its expiry a lease is left to its holder before the sweeper returns it. */
    sweepGraceMs: number;
  };
  tasks: {
    /** How often one pod polls unfinished tasks (new-api: 15 s). */
    pollIntervalMs: number;
    /** A Midjourney task not finished this long after submission fails and is refunded (new-api: 1 h). */
    midjourneyTimeoutMs: number;
    /** Suno (and later video) tasks: new-api's TASK_TIMEOUT. */
    taskTimeoutMs: number;
  };
  /** How often one pod refreshes every enabled channel's upstream balance (CHANNEL_UPDATE_FREQUENCY); undefined: never. */
  channelBalanceIntervalMs: number | undefined;
  channelHealth: {
    /** CHANNEL_TEST_FREQUENCY: test every channel this often even if the option is off; undefined: by the option. */
    testIntervalMs: number | undefined;
    /** Longest a channel test waits for its upstream. */
    testTimeoutMs: number;
    /** First wait before re-testing a channel the gateway disabled; doubles after each failed re-test. */
    recoveryCooldownMs: number;
  };
  nodeName: string;
  version: string;
}

export interface OAuthEndpoints {
  /** Where GitHub's OAuth pages live (code exchange: {base}/login/oauth/access_token). */
  githubOAuthUrl: string;
  /** GitHub's REST API ({base}/user); for GitHub Enterprise e.g. https://ghe.example.com/api/v3. */
  githubApiUrl: string;
  /** LinuxDO Connect ({base}/oauth2/token and {base}/api/user). */
  linuxdoUrl: string;
  /** Discord's API ({base}/oauth2/token and {base}/users/@me). */
  discordApiUrl: string;
  /** Most time one call to a provider may take, so a slow provider never hangs a sign-in. */
  timeoutMs: number;
}

export interface RateLimit {
  enabled: boolean;
  count: number;
  windowMs: number;
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

/** A base address without a trailing slash, so paths can be appended as `${base}/path`. */
const base = (address: string): string => address.replace(/\/+$/, '');

function boolean(env: Env, key: string, fallback: boolean): boolean {
  const raw = env[key];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(`${key} must be true or false, got "${raw}"`);
}

/** "true" trusts every proxy, "false" none; otherwise a comma-separated list of proxy addresses or CIDRs. */
function trustProxy(raw: string | undefined): boolean | string[] {
  if (raw === undefined || raw === '' || raw === 'false') return false;
  if (raw === 'true') return true;
  return raw
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
}

function rateLimit(env: Env, name: string, count: number, windowSeconds: number): RateLimit {
  return {
    enabled: boolean(env, `${name}_ENABLE`, true),
    count: integer(env, name, count, 1, 1_000_000),
    windowMs: integer(env, `${name}_DURATION`, windowSeconds, 1, 86_400) * 1000,
  };
}

function secret(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (raw.length < 16) throw new ConfigError('SECRET_KEY must be at least 16 characters long');
  return raw;
}

/** A folder for the embedded database, or `memory://` for one that lives and dies with the process. */
function dataDir(raw: string): string {
  return raw.startsWith('memory://') ? raw : path.resolve(raw);
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function loadConfig(env: Env = process.env, version = '0.0.0'): Config {
  const logLevel = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  }
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const metricsPort = integer(env, 'METRICS_PORT', 9090, 0, 65535);
  if (metricsPort !== 0 && metricsPort === port) {
    throw new ConfigError(`METRICS_PORT must differ from PORT (both are ${port})`);
  }
  const host = env.HOST || '0.0.0.0';
  return {
    port,
    host,
    metricsPort,
    metricsHost: env.METRICS_HOST || host,
    migrateOnStart: boolean(env, 'MIGRATE_ON_START', true),
    databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    dataDir: dataDir(env.DATA_DIR || './data'),
    databasePoolMax: integer(env, 'DATABASE_POOL_MAX', 20, 1, 1000),
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    redisNamespace: env.REDIS_NAMESPACE || 'tollgate',
    logLevel,
    shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 30_000, 0, 3_600_000),
    syncIntervalMs: integer(env, 'SYNC_INTERVAL_SECONDS', 60, 1, 86_400) * 1000,
    apiBodyLimitBytes: integer(env, 'API_BODY_LIMIT_KB', 1024, 1, 1_048_576) * 1024,
    secretKey: secret(env.SECRET_KEY),
    trustProxy: trustProxy(env.TRUST_PROXY),
    sessionTtlMs: integer(env, 'SESSION_TTL_DAYS', 30, 1, 3650) * 86_400_000,
    notifyLimit: {
      count: integer(env, 'NOTIFY_LIMIT_COUNT', 2, 1, 1000),
      windowMs: integer(env, 'NOTIFICATION_LIMIT_DURATION_MINUTE', 10, 1, 10_080) * 60_000,
    },
    turnstileVerifyUrl:
      url(env, 'TURNSTILE_VERIFY_URL', ['https:', 'http:']) ??
      'https://challenges.cloudflare.com/turnstile/v0/siteverify',
    oauth: {
      githubOAuthUrl: base(url(env, 'GITHUB_OAUTH_URL', ['https:', 'http:']) ?? 'https://github.com'),
      githubApiUrl: base(url(env, 'GITHUB_API_URL', ['https:', 'http:']) ?? 'https://api.github.com'),
      linuxdoUrl: base(url(env, 'LINUXDO_OAUTH_URL', ['https:', 'http:']) ?? 'https://connect.linux.do'),
      discordApiUrl: base(url(env, 'DISCORD_API_URL', ['https:', 'http:']) ?? 'https://discord.com/api/v10'),
      timeoutMs: integer(env, 'OAUTH_TIMEOUT_MS', 10_000, 100, 120_000),
    },
    rateLimits: {
      globalApi: rateLimit(env, 'GLOBAL_API_RATE_LIMIT', 180, 180),
      critical: rateLimit(env, 'CRITICAL_RATE_LIMIT', 20, 1200),
    },
    relay: {
      bodyLimitBytes: integer(env, 'MAX_REQUEST_BODY_MB', 32, 1, 1024) * 1024 * 1024,
      headersTimeoutMs: integer(env, 'RELAY_TIMEOUT_SECONDS', 300, 1, 3600) * 1000,
      idleTimeoutMs: integer(env, 'STREAMING_TIMEOUT_SECONDS', 300, 1, 3600) * 1000,
      connectionsPerOrigin: integer(env, 'RELAY_MAX_CONNECTIONS_PER_HOST', 256, 1, 10_000),
      errorLogEnabled: boolean(env, 'ERROR_LOG_ENABLED', false),
    },
    quotaLeases: {
      ttlMs: integer(env, 'QUOTA_LEASE_TTL_SECONDS', 60, 3, 3600) * 1000,
      sweepIntervalMs: integer(env, 'QUOTA_LEASE_SWEEP_INTERVAL_SECONDS', 30, 1, 3600) * 1000,
      sweepGraceMs: integer(env, 'QUOTA_LEASE_SWEEP_GRACE_SECONDS', 10, 0, 3600) * 1000,
    },
    tasks: {
      pollIntervalMs: integer(env, 'TASK_POLL_INTERVAL_MS', 15_000, 100, 3_600_000),
      midjourneyTimeoutMs: integer(env, 'MJ_TASK_TIMEOUT_SECONDS', 3600, 1, 86_400) * 1000,
      // new-api's TASK_TIMEOUT_MINUTES (1440), in seconds so that tests can wait it out.
      taskTimeoutMs: integer(env, 'TASK_TIMEOUT_SECONDS', 86_400, 1, 604_800) * 1000,
    },
    channelBalanceIntervalMs: env.CHANNEL_UPDATE_FREQUENCY
      ? integer(env, 'CHANNEL_UPDATE_FREQUENCY', 0, 1, 525_600) * 60_000
      : undefined,
    channelHealth: {
      testIntervalMs: env.CHANNEL_TEST_FREQUENCY
        ? integer(env, 'CHANNEL_TEST_FREQUENCY', 0, 1, 525_600) * 60_000
        : undefined,
      testTimeoutMs: integer(env, 'CHANNEL_TEST_TIMEOUT_SECONDS', 60, 1, 600) * 1000,
      recoveryCooldownMs: integer(env, 'CHANNEL_RECOVERY_COOLDOWN_SECONDS', 60, 1, 86_400) * 1000,
    },
    nodeName: env.NODE_NAME || os.hostname(),
    version,
  };
}
