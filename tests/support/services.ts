import net from 'node:net';

/**
 * Finds the Postgres and Redis the tests talk to, in the order DESIGN.md §6 gives:
 * TEST_DATABASE_URL / TEST_REDIS_URL, then a local server on the default port, then
 * testcontainers when a Docker engine answers, else the embedded PGlite and in-process state.
 */
export interface TestServices {
  /** Admin connection string for creating per-file databases; undefined means PGlite. */
  databaseUrl: string | undefined;
  databaseSource: string;
  /** undefined means in-process cluster state. */
  redisUrl: string | undefined;
  redisSource: string;
}

const LOCAL_POSTGRES = 'postgres://postgres@127.0.0.1:5432/postgres';
const LOCAL_REDIS = 'redis://127.0.0.1:6379';

function answers(urlText: string, timeoutMs = 1000): Promise<boolean> {
  const url = new URL(urlText);
  const port = Number(url.port || (url.protocol.startsWith('redis') ? 6379 : 5432));
  return new Promise((resolve) => {
    const socket = net.connect({ host: url.hostname, port, timeout: timeoutMs });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('timeout', () => done(false));
    socket.once('error', () => done(false));
  });
}

type Stop = () => Promise<void>;

async function container(image: string, port: number, env: Record<string, string>, log: RegExp) {
  const { GenericContainer, Wait } = await import('testcontainers');
  const started = await new GenericContainer(image)
    .withEnvironment(env)
    .withExposedPorts(port)
    .withWaitStrategy(Wait.forLogMessage(log))
    .start();
  return { host: started.getHost(), port: started.getMappedPort(port), stop: async () => void (await started.stop()) };
}

interface ServiceKind {
  label: string;
  envVar: 'TEST_DATABASE_URL' | 'TEST_REDIS_URL';
  localUrl: string;
  container: {
    image: string;
    port: number;
    env: Record<string, string>;
    ready: RegExp;
    url(host: string, port: number): string;
  };
  fallback: string;
}

const POSTGRES: ServiceKind = {
  label: 'Postgres',
  envVar: 'TEST_DATABASE_URL',
  localUrl: LOCAL_POSTGRES,
  container: {
    image: 'postgres:16-alpine',
    port: 5432,
    env: { POSTGRES_HOST_AUTH_METHOD: 'trust' },
    ready: /ready to accept connections/,
    url: (host, port) => `postgres://postgres@${host}:${port}/postgres`,
  },
  fallback: 'embedded PGlite (no Postgres found)',
};

const REDIS: ServiceKind = {
  label: 'Redis',
  envVar: 'TEST_REDIS_URL',
  localUrl: LOCAL_REDIS,
  container: {
    image: 'redis:7-alpine',
    port: 6379,
    env: {},
    ready: /Ready to accept connections/,
    url: (h, p) => `redis://${h}:${p}`,
  },
  fallback: 'in-process (no Redis found)',
};

async function resolveOne(kind: ServiceKind, env: NodeJS.ProcessEnv, stops: Stop[]) {
  const configured = env[kind.envVar];
  if (configured) {
    if (!(await answers(configured))) throw new Error(`${kind.envVar} is set but nothing answers there`);
    return { url: configured, source: kind.envVar };
  }
  if (await answers(kind.localUrl)) {
    return { url: kind.localUrl, source: `local server on ${new URL(kind.localUrl).host}` };
  }
  try {
    const { image, port, env: containerEnv, ready, url } = kind.container;
    const started = await container(image, port, containerEnv, ready);
    stops.push(started.stop);
    return { url: url(started.host, started.port), source: 'testcontainers' };
  } catch {
    return { url: undefined, source: kind.fallback };
  }
}

export async function resolveServices(env = process.env): Promise<TestServices & { stop: Stop }> {
  const stops: Stop[] = [];
  const database = await resolveOne(POSTGRES, env, stops);
  const redis = await resolveOne(REDIS, env, stops);
  return {
    databaseUrl: database.url,
    databaseSource: database.source,
    redisUrl: redis.url,
    redisSource: redis.source,
    stop: async () => {
      for (const stop of stops) await stop();
    },
  };
}

export function describeServices(s: TestServices): string {
  const db = s.databaseUrl ? `Postgres ${redact(s.databaseUrl)} (${s.databaseSource})` : s.databaseSource;
  const redis = s.redisUrl ? `Redis ${redact(s.redisUrl)} (${s.redisSource})` : s.redisSource;
  return `Tests use database: ${db}; cluster state: ${redis}`;
}

function redact(urlText: string): string {
  const url = new URL(urlText);
  if (url.password) url.password = '***';
  return url.toString();
}
