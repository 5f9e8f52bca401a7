import { PGlite, type PGliteOptions } from '@electric-sql/pglite';

/**
 * Postgres settings of the embedded database (PGlite), given at every start and to initdb (so the first
 * start creates the folder with them and writes them into its postgresql.conf).
 *
 * shared_buffers: initdb picks 128MB, and PGlite's WebAssembly heap allocates and zeroes all of it at
 * start, so it is resident whether used or not. 32MB (4,096 pages) holds the gateway's hot tables and
 * indexes; pages beyond it are read from the operating system's file cache. Measured with
 * `node bench/pglite-memory.ts`: about 100 MiB less RSS after a reopen, the same speed of small statements;
 * log listings that scan much of a large table are up to a third slower (README, Benchmarks).
 * Nothing here touches durability: PGlite's default start parameters are kept, so commits reach the folder
 * before they return, as before.
 */
const POSTGRES_SETTINGS = ['-c', 'shared_buffers=32MB'];

export function embeddedSettings(): Pick<PGliteOptions, 'startParams' | 'initDbStartParams'> {
  return {
    startParams: [...PGlite.defaultStartParams, ...POSTGRES_SETTINGS],
    initDbStartParams: POSTGRES_SETTINGS,
  };
}
