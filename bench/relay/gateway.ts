/**
 * The real gateway for the relay benchmark: `node gateway/src/main.ts` as its own process, on a fresh
 * embedded database in a temporary folder (or a scratch database on BENCH_DATABASE_URL, and Redis on
 * BENCH_REDIS_URL), set up through its HTTP API the way an operator would: first-run setup, a price for
 * the model, the model request limit switched on (with room enough never to refuse), an OpenAI channel to
 * the mock upstream and an API key with unlimited quota. It starts with Node's compile cache filled first,
 * as the image's build and `npm start` fill theirs (scripts/warm-compile-cache.mjs): the gateway as deployed.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import pg from 'pg';
import { withMallocTunables } from '../../scripts/malloc-tunables.mjs';
import { type DashboardClient, setupRoot } from '../../tests/support/client.ts';
import { type Child, spawnNode, waitForLogLine } from './processes.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface BenchGateway {
  child: Child;
  url: string;
  /** The private listener, where /metrics is. */
  metricsUrl: string;
  key: string;
  admin: DashboardClient;
  logFile: string;
  /** What the gateway runs on, for the report. */
  database: string;
  cluster: string;
  /**
   * Processes of the services the gateway uses right now (its Postgres backends, the Redis server), so
   * their CPU counts as the benchmark's, not as other work on the machine. Empty on the embedded ones.
   */
  servicePids(): Promise<number[]>;
  /** Stops the gateway (gracefully, so batched logs are written) and removes its database and Redis keys. */
  close(): Promise<void>;
}

export interface GatewayOptions {
  /** The process's name in messages. */
  name: string;
  core: number;
  upstreamUrl: string;
  logLevel: string;
  databaseUrl?: string;
  redisUrl?: string;
  /** Write a V8 CPU profile of the gateway into this folder when it stops. */
  cpuProfileDir?: string;
  /** Cleanups to run even if starting fails half-way; the caller runs them on exit. */
  cleanups: Array<() => Promise<void>>;
}

function redact(text: string): string {
  const url = new URL(text);
  if (url.password) url.password = '***';
  return url.toString();
}

export async function startBenchGateway(options: GatewayOptions): Promise<BenchGateway> {
  const dir = await mkdtemp(path.join(tmpdir(), 'tollgate-bench-relay-'));
  options.cleanups.push(() => rm(dir, { recursive: true, force: true }));
  // As every launcher starts it (scripts/malloc-tunables.mjs).
  const env: Record<string, string> = withMallocTunables({
    PORT: '0',
    METRICS_PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: options.logLevel,
    NODE_NAME: 'bench',
    REDIS_NAMESPACE: `tollgate-bench-${randomBytes(4).toString('hex')}`,
    NODE_COMPILE_CACHE: path.join(dir, 'compile-cache'),
    ...(process.env.GLIBC_TUNABLES ? { GLIBC_TUNABLES: process.env.GLIBC_TUNABLES } : {}),
  });
  await promisify(execFile)(process.execPath, [
    path.join(root, 'scripts/warm-compile-cache.mjs'),
    env.NODE_COMPILE_CACHE!,
  ]);

  let database = 'embedded PGlite (temporary folder)';
  const lookups: Array<() => Promise<number[]>> = [];
  if (options.databaseUrl) {
    const name = `tollgate_bench_relay_${process.pid}_${randomBytes(3).toString('hex')}`;
    const admin = new pg.Client({ connectionString: options.databaseUrl });
    await admin.connect();
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.query(`create database ${name}`);
    await admin.end();
    options.cleanups.push(async () => {
      const dropper = new pg.Client({ connectionString: options.databaseUrl });
      await dropper.connect();
      await dropper.query(`drop database if exists ${name} with (force)`);
      await dropper.end();
    });
    const url = new URL(options.databaseUrl);
    url.pathname = `/${name}`;
    env.DATABASE_URL = url.toString();
    const watcher = new pg.Client({ connectionString: options.databaseUrl });
    await watcher.connect();
    options.cleanups.push(() => watcher.end());
    lookups.push(async () => {
      const rows = await watcher.query<{ pid: number }>(
        'select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
        [name],
      );
      return rows.rows.map((r) => r.pid);
    });
    database = `Postgres ${redact(options.databaseUrl)} (scratch database ${name})`;
  } else {
    env.DATA_DIR = path.join(dir, 'data');
  }

  let cluster = 'in-process';
  if (options.redisUrl) {
    env.REDIS_URL = options.redisUrl;
    cluster = `Redis ${redact(options.redisUrl)} (namespace ${env.REDIS_NAMESPACE})`;
    const redisUrl = options.redisUrl;
    const namespace = env.REDIS_NAMESPACE!;
    const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await redis.connect();
    const serverPid = Number(/process_id:(\d+)/.exec(await redis.info('server'))?.[1]);
    await redis.quit();
    // A Redis on another machine or in a container has a process id that means nothing here.
    if (Number.isInteger(serverPid) && ['127.0.0.1', 'localhost', '[::1]'].includes(new URL(redisUrl).hostname)) {
      lookups.push(async () => [serverPid]);
    }
    options.cleanups.push(async () => {
      const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
      await redis.connect();
      for await (const keys of redis.scanStream({ match: `${namespace}*`, count: 1000 })) {
        if ((keys as string[]).length) await redis.del(...(keys as string[]));
      }
      await redis.quit();
    });
  }

  const logFile = path.join(dir, 'gateway.log');
  const profile = options.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfileDir}`] : [];
  const child = spawnNode(options.name, [...profile, path.join(root, 'gateway/src/main.ts')], {
    core: options.core,
    env,
    logFile,
  });
  // Registered before anything can fail, and run before the folder is removed (cleanups run in reverse).
  options.cleanups.push(() => child.stop('SIGTERM', 30_000));
  const { url, metricsUrl } = await waitForLogLine(child, logFile, (line) =>
    line.msg === 'gateway listening' ? { url: String(line.url), metricsUrl: String(line.metricsUrl) } : undefined,
  );

  const admin = await setupRoot(url, 'bench-root-password');
  const check = (what: string, answer: { body: any }) => {
    if (!answer.body?.success) throw new Error(`${what} failed: ${JSON.stringify(answer.body)}`);
    return answer.body;
  };
  for (const [key, value] of Object.entries({
    ModelRatio: JSON.stringify({ 'gpt-4o-mini': 0.075 }),
    CompletionRatio: JSON.stringify({ 'gpt-4o-mini': 4 }),
    // On, so every request is counted, with limits high enough never to refuse one.
    ModelRequestRateLimitEnabled: 'true',
    ModelRequestRateLimitCount: '100000000',
    ModelRequestRateLimitSuccessCount: '100000000',
    ModelRequestRateLimitDurationMinutes: '1',
  })) {
    check(`setting ${key}`, await admin.put('/api/option/', { key, value }));
  }
  check(
    'creating the channel',
    await admin.post('/api/channel/', {
      name: 'bench-mock',
      type: 1,
      key: 'sk-bench-upstream',
      base_url: options.upstreamUrl,
      models: 'gpt-4o-mini',
      group: 'default',
    }),
  );
  const key = String(
    check('creating the key', await admin.post('/api/token/', { name: 'bench', unlimited_quota: true })).data.key,
  );

  // The routing index learns of the channel over the bus; wait until the key sees the model.
  const deadline = Date.now() + 10_000;
  for (;;) {
    const models = (await (
      await fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })
    ).json()) as {
      data?: unknown[];
    };
    if (models.data?.length) break;
    if (Date.now() > deadline) throw new Error('the gateway never listed the benchmark model');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  return {
    child,
    url,
    metricsUrl,
    key,
    admin,
    logFile,
    database,
    cluster,
    servicePids: async () => (await Promise.all(lookups.map((lookup) => lookup()))).flat(),
    close: () => child.stop('SIGTERM', 30_000),
  };
}
