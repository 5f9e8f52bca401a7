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

export async function resolveServices(env = process.env): Promise<TestServices & { stop: Stop }> {
  const stops: Stop[] = [];
  let databaseUrl: string | undefined;
  let databaseSource: string;
  if (env.TEST_DATABASE_URL) {
    if (!(await answers(env.TEST_DATABASE_URL))) throw new Error('TEST_DATABASE_URL is set but nothing answers there');
    databaseUrl = env.TEST_DATABASE_URL;
    databaseSource = 'TEST_DATABASE_URL';
  } else if (await answers(LOCAL_POSTGRES)) {
    databaseUrl = LOCAL_POSTGRES;
    databaseSource = 'local server on 127.0.0.1:5432';
  } else {
    try {
      const pg = await container(
        'postgres:16-alpine',
        5432,
        { POSTGRES_HOST_AUTH_METHOD: 'trust' },
        /ready to accept connections/,
      );
      stops.push(pg.stop);
      databaseUrl = `postgres://postgres@${pg.host}:${pg.port}/postgres`;
      databaseSource = 'testcontainers';
    } catch {
      databaseSource = 'embedded PGlite (no Postgres found)';
    }
  }

  let redisUrl: string | undefined;
  let redisSource: string;
  if (env.TEST_REDIS_URL) {
    if (!(await answers(env.TEST_REDIS_URL))) throw new Error('TEST_REDIS_URL is set but nothing answers there');
    redisUrl = env.TEST_REDIS_URL;
    redisSource = 'TEST_REDIS_URL';
  } else if (await answers(LOCAL_REDIS)) {
    redisUrl = LOCAL_REDIS;
    redisSource = 'local server on 127.0.0.1:6379';
  } else {
    try {
      const redis = await container('redis:7-alpine', 6379, {}, /Ready to accept connections/);
      stops.push(redis.stop);
      redisUrl = `redis://${redis.host}:${redis.port}`;
      redisSource = 'testcontainers';
    } catch {
      redisSource = 'in-process (no Redis found)';
    }
  }

  return {
    databaseUrl,
    databaseSource,
    redisUrl,
    redisSource,
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
