/**
 * The embedded database's process, started by embedded-client.ts. PGlite is WebAssembly and runs a
 * statement from start to end without returning, so in the gateway's thread every statement (a batch of usage
 * logs, a log listing, VACUUM) would stall every request in flight; here it only takes CPU time. A process
 * rather than a worker thread so that it can run with `--liftoff-only`: V8's optimising compiler would spend
 * about 500 MiB for a moment on one very large function of PGlite's WebAssembly, a flag only a process can
 * have to itself (README, "Memory of the embedded database").
 *
 * Messages in (IPC): `{ id, sql, params }` answered with `{ id, rows, affectedRows }` or `{ id, error }`;
 * `{ close: true }` closes PGlite and answers `{ closed: true }`. Out at start: `{ ready: true }` or
 * `{ failed: error }`. When the gateway is gone (even killed) so is this process: what was committed is in
 * the folder already.
 */
import { PGlite } from '@electric-sql/pglite';
import { embeddedSettings } from './embedded-settings.ts';
import { statementTally } from './statement-tally.ts';

export interface QueryMessage {
  id: number;
  sql: string;
  params: unknown[];
}

export type EmbeddedReply =
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

process.on('disconnect', () => process.exit(0));
// Ctrl-C or a signal to the whole process group must not end the database under the gateway while the
// gateway shuts down (it still writes usage logs and gives quota leases back): the gateway closes it.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => {});
const send = (reply: EmbeddedReply) => process.send!(reply);

async function start(dataDir: string): Promise<void> {
  let pglite: PGlite;
  try {
    pglite = new PGlite(dataDir, {
      ...embeddedSettings(),
      parsers: { [INT8_OID]: toNumber, [NUMERIC_OID]: toNumber },
    });
    await pglite.waitReady;
  } catch (error) {
    send({ failed: serialise(error) } satisfies EmbeddedReply);
    return;
  }
  const tally = statementTally();
  const run = (message: QueryMessage) => pglite.query(message.sql, message.params);
  process.on('message', async (message: QueryMessage | { close: true }) => {
    if ('close' in message) {
      await pglite.close().catch(() => {});
      send({ closed: true } satisfies EmbeddedReply);
      process.disconnect();
      return;
    }
    try {
      const result = tally ? await tally.time(message.sql, () => run(message)) : await run(message);
      send({ id: message.id, rows: result.rows, affectedRows: result.affectedRows } satisfies EmbeddedReply);
    } catch (error) {
      send({ id: message.id, error: serialise(error) } satisfies EmbeddedReply);
    }
  });
  send({ ready: true } satisfies EmbeddedReply);
}

await start(process.argv[2]!);
