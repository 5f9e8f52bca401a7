/**
 * The two ways the gateway is deployed, each measured in every run: on Postgres + Redis (a scratch
 * database on BENCH_DATABASE_URL, created and dropped, and a namespace on BENCH_REDIS_URL) and on the
 * embedded default (PGlite in a temporary folder, in-process state). A mode whose services do not answer
 * is reported as skipped with the reason instead of failing the run.
 */
import { Redis } from 'ioredis';
import pg from 'pg';

export type ModeId = 'postgres' | 'embedded';

export interface Mode {
  id: ModeId;
  /** The mode's name in tables; also the name of its gateway target. */
  title: string;
  databaseUrl?: string;
  redisUrl?: string;
}

const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
const CONNECT_TIMEOUT_MS = 3000;

/** The modes BENCH_MODES asks for (a comma-separated list of postgres, embedded; both by default). */
export function selectedModes(env: NodeJS.ProcessEnv = process.env): Mode[] {
  const all: Mode[] = [
    {
      id: 'postgres',
      title: 'gateway, Postgres + Redis',
      databaseUrl: env.BENCH_DATABASE_URL || DEFAULT_DATABASE_URL,
      redisUrl: env.BENCH_REDIS_URL || DEFAULT_REDIS_URL,
    },
    { id: 'embedded', title: 'gateway, embedded' },
  ];
  const wanted = (env.BENCH_MODES || 'postgres,embedded').split(',').map((id) => id.trim());
  for (const id of wanted) {
    if (!all.some((mode) => mode.id === id)) throw new Error(`BENCH_MODES: unknown mode ${id} (postgres, embedded)`);
  }
  return all.filter((mode) => wanted.includes(mode.id));
}

/** Why the mode's Postgres or Redis cannot be used, or undefined when both answer. */
export async function unreachable(mode: Mode): Promise<string | undefined> {
  if (mode.databaseUrl) {
    const client = new pg.Client({ connectionString: mode.databaseUrl, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
    try {
      await client.connect();
      await client.query('select 1');
    } catch (error) {
      return `Postgres at ${hostOf(mode.databaseUrl)} does not answer: ${(error as Error).message}`;
    } finally {
      await client.end().catch(() => {});
    }
  }
  if (mode.redisUrl) {
    const redis = new Redis(mode.redisUrl, {
      lazyConnect: true,
      connectTimeout: CONNECT_TIMEOUT_MS,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    redis.on('error', () => {});
    try {
      await redis.connect();
      await redis.ping();
    } catch (error) {
      return `Redis at ${hostOf(mode.redisUrl)} does not answer: ${(error as Error).message}`;
    } finally {
      redis.disconnect();
    }
  }
  return undefined;
}

/** Host and port only: a URL's credentials stay out of the report. */
function hostOf(url: string): string {
  return new URL(url).host;
}
