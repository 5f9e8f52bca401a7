import { Worker } from 'node:worker_threads';
import type { QueryMessage, SerialisedError, WorkerReply } from './embedded-worker.ts';

/** What the Kysely dialect needs of the embedded database: PGlite itself, or its thread (below). */
export interface EmbeddedDatabase {
  query<R>(sql: string, params: unknown[]): Promise<{ rows: R[]; affectedRows?: number | undefined }>;
  close(): Promise<void>;
}

/** An error from the embedded database's thread, with Postgres' fields (`code`, `detail`, …) as PGlite gave them. */
function revive(fields: SerialisedError): Error {
  const { message, name, ...rest } = fields;
  const error = Object.assign(new Error(message), rest);
  if (typeof name === 'string') error.name = name;
  return error;
}

interface Waiting {
  resolve(reply: { rows: unknown[]; affectedRows: number | undefined }): void;
  reject(error: Error): void;
}

/**
 * The embedded database in a worker thread of its own (embedded-worker.ts). Measured (README, "Memory of
 * the embedded database"): a statement costs the gateway's thread about 50 µs of messaging instead of the
 * whole statement (an indexed read about 200 µs, 100 usage logs a few milliseconds, a log listing tens of
 * them), at about 65 µs more CPU per statement in all; the relay path writes about one statement per 40
 * requests.
 *
 * The thread keeps the process alive only while a statement is waiting for it, so a process that forgets
 * to close the store still exits; a committed statement has been written to the folder before it answers,
 * as in the gateway's own thread.
 */
export class EmbeddedWorker implements EmbeddedDatabase {
  readonly #worker: Worker;
  readonly #waiting = new Map<number, Waiting>();
  #nextId = 0;
  #failure: Error | undefined;
  #closing: Promise<void> | undefined;

  private constructor(worker: Worker) {
    this.#worker = worker;
  }

  static async open(dataDir: string): Promise<EmbeddedWorker> {
    const worker = new Worker(new URL('./embedded-worker.ts', import.meta.url), { workerData: { dataDir } });
    let onExit: ((code: number) => void) | undefined;
    const started = await new Promise<WorkerReply>((resolve, reject) => {
      onExit = (code) => reject(new Error(`the embedded database's thread exited (${code}) while opening`));
      worker.once('message', resolve);
      worker.once('error', reject);
      worker.once('exit', onExit);
    }).finally(() => {
      worker.removeAllListeners('error');
      worker.off('exit', onExit!);
    });
    if ('failed' in started) {
      await worker.terminate();
      throw revive(started.failed);
    }
    const client = new EmbeddedWorker(worker);
    worker.on('message', (reply: WorkerReply) => client.#answer(reply));
    worker.on('error', (error) => client.#fail(error));
    worker.on('exit', (code) => client.#fail(new Error(`the embedded database's thread exited (${code})`)));
    worker.unref();
    return client;
  }

  query<R>(sql: string, params: unknown[]): Promise<{ rows: R[]; affectedRows?: number | undefined }> {
    if (this.#failure) return Promise.reject(this.#failure);
    if (this.#closing) return Promise.reject(new Error('the embedded database is closed'));
    const id = this.#nextId++;
    if (this.#waiting.size === 0) this.#worker.ref();
    const answer = new Promise<{ rows: unknown[]; affectedRows: number | undefined }>((resolve, reject) =>
      this.#waiting.set(id, { resolve, reject }),
    );
    this.#worker.postMessage({ id, sql, params } satisfies QueryMessage);
    return answer as Promise<{ rows: R[]; affectedRows: number | undefined }>;
  }

  /** Closes PGlite (it writes what it holds to the folder) and ends the thread. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      if (this.#failure) return;
      this.#worker.ref();
      const closed = new Promise<void>((resolve) => {
        this.#worker.on('message', (reply: WorkerReply) => {
          if ('closed' in reply) resolve();
        });
        this.#worker.once('exit', () => resolve());
      });
      this.#worker.postMessage({ close: true });
      await closed;
      await this.#worker.terminate();
    })();
    return this.#closing;
  }

  #answer(reply: WorkerReply): void {
    if (!('id' in reply)) return;
    const waiting = this.#waiting.get(reply.id);
    if (!waiting) return;
    this.#waiting.delete(reply.id);
    if (this.#waiting.size === 0 && !this.#closing) this.#worker.unref();
    if ('error' in reply) waiting.reject(revive(reply.error));
    else waiting.resolve(reply);
  }

  #fail(error: Error): void {
    this.#failure ??= error;
    for (const waiting of this.#waiting.values()) waiting.reject(error);
    this.#waiting.clear();
  }
}
