import { setImmediate as nextTurn } from 'node:timers/promises';
import type { PGlite } from '@electric-sql/pglite';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';

/**
 * Kysely dialect for the embedded PGlite database. PGlite has one connection, so connections are
 * handed out one at a time: a transaction holds it until it commits or rolls back.
 */
export class PGliteDialect implements Dialect {
  readonly #pglite: PGlite;
  constructor(pglite: PGlite) {
    this.#pglite = pglite;
  }
  createAdapter() {
    return new PostgresAdapter();
  }
  createDriver(): Driver {
    return new PGliteDriver(this.#pglite);
  }
  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }
  createIntrospector(db: Kysely<any>) {
    return new PostgresIntrospector(db);
  }
}

/**
 * PGlite is WebAssembly in this thread: a statement holds the event loop until it is done, and statements
 * chained with await (a transaction, a batch of usage logs) would follow one another without letting any
 * I/O in, stalling every request in flight for the whole chain. So a statement that comes in the same turn
 * of the event loop as another waits for the next turn (setImmediate, after the poll for I/O): requests are
 * served between the statements of a batch, each waiting for one statement at most.
 */
class PGliteConnection implements DatabaseConnection {
  readonly #pglite: PGlite;
  /** A statement ran in this turn of the event loop (cleared by the next check phase). */
  #ranThisTurn = false;
  constructor(pglite: PGlite) {
    this.#pglite = pglite;
  }
  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.#ranThisTurn) await nextTurn();
    this.#markTurn();
    const result = await this.#pglite.query<R>(query.sql, [...query.parameters]);
    return {
      rows: result.rows,
      ...(result.affectedRows === undefined ? {} : { numAffectedRows: BigInt(result.affectedRows) }),
    };
  }
  #markTurn(): void {
    if (this.#ranThisTurn) return;
    this.#ranThisTurn = true;
    setImmediate(() => {
      this.#ranThisTurn = false;
    });
  }
  // biome-ignore lint/correctness/useYield: streaming is unsupported; the error says so.
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('PGlite does not support streaming queries');
  }
}

class PGliteDriver implements Driver {
  readonly #pglite: PGlite;
  readonly #connection: PGliteConnection;
  #busy = false;
  readonly #waiting: Array<() => void> = [];

  constructor(pglite: PGlite) {
    this.#pglite = pglite;
    this.#connection = new PGliteConnection(pglite);
  }
  async init() {
    await this.#pglite.waitReady;
  }
  async acquireConnection(): Promise<DatabaseConnection> {
    if (this.#busy) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    this.#busy = true;
    return this.#connection;
  }
  async releaseConnection() {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#busy = false;
  }
  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings) {
    const isolation = settings.isolationLevel ? ` isolation level ${settings.isolationLevel}` : '';
    await connection.executeQuery(CompiledQuery.raw(`begin${isolation}`));
  }
  async commitTransaction(connection: DatabaseConnection) {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }
  async rollbackTransaction(connection: DatabaseConnection) {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }
  async destroy() {
    if (!this.#pglite.closed) await this.#pglite.close();
  }
}
