import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { Database } from './database.ts';
import { PGliteDialect } from './dialects/pglite.ts';
import { EmbeddedProcess } from './embedded-client.ts';
import { StoreGuard } from './unavailable.ts';

export type StoreKind = 'postgres' | 'pglite';

export interface Store {
  db: Kysely<Database>;
  kind: StoreKind;
  /** Throws when the database does not answer. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export type StoreOptions = { databaseUrl: string; poolMax?: number } | { dataDir: string };

const INT8_OID = 20;
const NUMERIC_OID = 1700;
/** Quota and times fit comfortably in a double; Kysely types them as numbers. */
const toNumber = (value: string) => Number(value);

export async function openStore(options: StoreOptions): Promise<Store> {
  const store =
    'databaseUrl' in options
      ? openPostgres(options.databaseUrl, options.poolMax ?? 20)
      : await openPGlite(options.dataDir);
  return store;
}

function openPostgres(databaseUrl: string, poolMax: number): Store {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: poolMax,
    // A database that does not answer is reported within two seconds of trying to connect; a request
    // waiting for a free client (all busy) gives up after ten, not after the default of never.
    Client: QuickConnectClient,
    connectionTimeoutMillis: POOL_WAIT_MS,
    types: {
      getTypeParser: (oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID || oid === NUMERIC_OID ? toNumber : pg.types.getTypeParser(oid, format as 'text'),
    },
  });
  // A client that loses its connection (Postgres restarting, a failover) must not crash the process:
  // an idle one is dropped by the pool, one checked out fails its query, and the next query reconnects.
  pool.on('error', () => {});
  // While it is unreachable, requests fail at once with StoreUnavailableError (a 503) instead of each
  // waiting for its own connect timeout (unavailable.ts).
  const guard = new StoreGuard();
  pool.on('connect', (client) => {
    client.on('error', () => {});
    guardQueries(client, guard);
  });
  const guarded = { connect: () => guard.checkout(() => pool.connect()), end: () => pool.end(), options: pool.options };
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: guarded }) });
  return storeFor(db, 'postgres');
}

const CONNECT_TIMEOUT_MS = 2000;
const POOL_WAIT_MS = 10_000;

/** A client whose own connect gives up after CONNECT_TIMEOUT_MS, below the pool's wait for a free client. */
class QuickConnectClient extends pg.Client {
  constructor(config: pg.ClientConfig = {}) {
    super({ ...config, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  }
}

/** A statement that fails because the connection is gone trips the guard and rejects with StoreUnavailableError. */
function guardQueries(client: pg.PoolClient, guard: StoreGuard): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const result = query(...args);
    if (result instanceof Promise) {
      return result.catch((error: unknown) => {
        throw guard.failed(error);
      });
    }
    return result;
  };
}

async function openPGlite(dataDir: string): Promise<Store> {
  if (!dataDir.startsWith('memory://')) {
    await mkdir(dataDir, { recursive: true });
    if (!existsSync(path.join(dataDir, 'PG_VERSION'))) await createInChildProcess(dataDir);
  }
  // In a process of its own, so that no statement stalls the gateway's event loop (embedded-client.ts).
  const embedded = await EmbeddedProcess.open(dataDir);
  const db = new Kysely<Database>({ dialect: new PGliteDialect(embedded) });
  return storeFor(db, 'pglite');
}

/** A new folder is created by a process of its own, so the gateway never carries initdb's peak (create-embedded.ts). */
async function createInChildProcess(dataDir: string): Promise<void> {
  const script = path.join(import.meta.dirname, 'create-embedded.ts');
  await promisify(execFile)(process.execPath, [script, dataDir]);
}

function storeFor(db: Kysely<Database>, kind: StoreKind): Store {
  let closed = false;
  return {
    db,
    kind,
    async ping() {
      await sql`select 1`.execute(db);
    },
    async close() {
      if (closed) return;
      closed = true;
      await db.destroy();
    },
  };
}
