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
import type { EmbeddedDatabase } from '../embedded-client.ts';

/**
 * Kysely dialect for the embedded PGlite database, in its own thread (embedded-client.ts) or, for
 * measurements, in this one. PGlite has one connection, so connections are handed out one at a time: a
 * transaction holds it until it commits or rolls back.
 */
export class PGliteDialect implements Dialect {
  readonly #pglite: EmbeddedDatabase;
  constructor(pglite: EmbeddedDatabase) {
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

class PGliteConnection implements DatabaseConnection {
  readonly #pglite: EmbeddedDatabase;
  constructor(pglite: EmbeddedDatabase) {
    this.#pglite = pglite;
  }
  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const result = await this.#pglite.query<R>(query.sql, [...query.parameters]);
    return {
      rows: result.rows,
      ...(result.affectedRows === undefined ? {} : { numAffectedRows: BigInt(result.affectedRows) }),
    };
  }
  // biome-ignore lint/correctness/useYield: streaming is unsupported; the error says so.
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('PGlite does not support streaming queries');
  }
}

class PGliteDriver implements Driver {
  readonly #pglite: EmbeddedDatabase;
  readonly #connection: PGliteConnection;
  #busy = false;
  #closed: Promise<void> | undefined;
  readonly #waiting: Array<() => void> = [];

  constructor(pglite: EmbeddedDatabase) {
    this.#pglite = pglite;
    this.#connection = new PGliteConnection(pglite);
  }
  async init() {}
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
    this.#closed ??= this.#pglite.close();
    await this.#closed;
  }
}
