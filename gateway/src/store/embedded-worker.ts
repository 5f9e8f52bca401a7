/**
 * The embedded database's thread (a worker_thread started by embedded-client.ts): PGlite is WebAssembly and
 * runs a statement synchronously from start to end, so in the gateway's own thread every statement (a batch
 * of usage logs, a log listing, VACUUM) would stall every request in flight. Here it only takes CPU time.
 *
 * Messages in: `{ id, sql, params }` answered with `{ id, rows, affectedRows }` or `{ id, error }`;
 * `{ close: true }` closes PGlite and answers `{ closed: true }`. Out at start: `{ ready: true }` or
 * `{ failed: error }`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { embeddedSettings } from './embedded-settings.ts';

export interface QueryMessage {
  id: number;
  sql: string;
  params: unknown[];
}

export type WorkerReply =
  | { id: number; rows: unknown[]; affectedRows: number | undefined }
  | { id: number; error: SerialisedError }
  | { ready: true }
  | { failed: SerialisedError }
  | { closed: true };

/** An error's message and its own fields (Postgres' `code`, `detail`, `constraint`, …), which cloning would drop. */
export type SerialisedError = Record<string, unknown> & { message: string };

const INT8_OID = 20;
const NUMERIC_OID = 1700;
/** Quota and times fit comfortably in a double; Kysely types them as numbers (as the Postgres pool does). */
const toNumber = (value: string) => Number(value);

function serialise(error: unknown): SerialisedError {
  if (!(error instanceof Error)) return { message: String(error) };
  const fields: SerialisedError = { message: error.message, name: error.name };
  for (const [key, value] of Object.entries(error)) {
    if (value === undefined || typeof value === 'function' || typeof value === 'object') continue;
    fields[key] = value;
  }
  return fields;
}

const port = parentPort!;

async function start(dataDir: string): Promise<void> {
  let pglite: PGlite;
  try {
    pglite = new PGlite(dataDir, {
      ...embeddedSettings(),
      parsers: { [INT8_OID]: toNumber, [NUMERIC_OID]: toNumber },
    });
    await pglite.waitReady;
  } catch (error) {
    port.postMessage({ failed: serialise(error) } satisfies WorkerReply);
    return;
  }
  port.on('message', async (message: QueryMessage | { close: true }) => {
    if ('close' in message) {
      await pglite.close().catch(() => {});
      port.postMessage({ closed: true } satisfies WorkerReply);
      port.close();
      return;
    }
    try {
      const result = await pglite.query(message.sql, message.params);
      port.postMessage({ id: message.id, rows: result.rows, affectedRows: result.affectedRows } satisfies WorkerReply);
    } catch (error) {
      port.postMessage({ id: message.id, error: serialise(error) } satisfies WorkerReply);
    }
  });
  port.postMessage({ ready: true } satisfies WorkerReply);
}

await start((workerData as { dataDir: string }).dataDir);
