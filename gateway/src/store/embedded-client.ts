import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { EmbeddedReply, QueryMessage, SerialisedError } from './embedded-process.ts';

/** What the Kysely dialect needs of the embedded database: PGlite itself, or its process (below). */
export interface EmbeddedDatabase {
  query<R>(sql: string, params: unknown[]): Promise<{ rows: R[]; affectedRows?: number | undefined }>;
  close(): Promise<void>;
}

/** An error from the embedded database's process, with Postgres' fields (`code`, `detail`, …) as PGlite gave them. */
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
 * Liftoff (V8's baseline WebAssembly compiler) only: no start-up peak from the optimising compiler, at
 * statements about a third slower (README, "Memory of the embedded database").
 */
const EXEC_ARGV = ['--liftoff-only'];

/**
 * A gateway started with `--cpu-prof` profiles its database process too (its own file in the same folder):
 * on one core the database's CPU is the gateway's cost. Only the flag and its `=` options (a value given as
 * the next argument would be left behind), and not `--cpu-prof-name`: both processes would write one file.
 */
const profileFlags = () =>
  process.execArgv.filter(
    (flag) => flag === '--cpu-prof' || flag.startsWith('--cpu-prof-dir=') || flag.startsWith('--cpu-prof-interval='),
  );

/**
 * The embedded database in a process of its own (embedded-process.ts), spoken to over IPC. Measured (README,
 * "Memory of the embedded database"): a statement costs the gateway's thread about 60–90 µs of messaging
 * instead of the whole statement (an indexed read about 200 µs, 100 usage logs a few milliseconds, a log
 * listing tens of them); the relay path writes about one statement per 40 requests.
 *
 * The process keeps the gateway alive only while a statement is waiting for it, so a process that forgets
 * to close the store still exits, and it ends when the gateway does, even killed. A committed statement has
 * been written to the folder before it answers, as in the gateway's own thread.
 */
export class EmbeddedProcess implements EmbeddedDatabase {
  readonly #child: ChildProcess;
  readonly #waiting = new Map<number, Waiting>();
  #nextId = 0;
  #failure: Error | undefined;
  #closing: Promise<void> | undefined;
  readonly #exited: Promise<void>;

  private constructor(child: ChildProcess) {
    this.#child = child;
    this.#exited = new Promise((resolve) => child.once('exit', () => resolve()));
  }

  static async open(dataDir: string): Promise<EmbeddedProcess> {
    const script = fileURLToPath(new URL('./embedded-process.ts', import.meta.url));
    const child = fork(script, [dataDir], { execArgv: [...EXEC_ARGV, ...profileFlags()], serialization: 'advanced' });
    const client = new EmbeddedProcess(child);
    let opened: (reply: EmbeddedReply) => void = () => {};
    const started = new Promise<EmbeddedReply>((resolve) => {
      opened = resolve;
    });
    child.on('message', (reply: EmbeddedReply) => ('id' in reply ? client.#answer(reply) : opened(reply)));
    child.on('error', (error) => {
      opened({ failed: { message: error.message } });
      client.#fail(error);
    });
    child.on('exit', (code, signal) => {
      const error = new Error(`the embedded database's process exited (${signal ?? code})`);
      opened({ failed: { message: error.message } });
      client.#fail(error);
    });
    const reply = await started;
    if ('failed' in reply) {
      child.kill();
      throw revive(reply.failed);
    }
    client.#idle();
    return client;
  }

  query<R>(sql: string, params: unknown[]): Promise<{ rows: R[]; affectedRows?: number | undefined }> {
    if (this.#failure) return Promise.reject(this.#failure);
    if (this.#closing) return Promise.reject(new Error('the embedded database is closed'));
    const id = this.#nextId++;
    if (this.#waiting.size === 0) this.#busy();
    const answer = new Promise<{ rows: unknown[]; affectedRows: number | undefined }>((resolve, reject) =>
      this.#waiting.set(id, { resolve, reject }),
    );
    this.#child.send({ id, sql, params } satisfies QueryMessage);
    return answer as Promise<{ rows: R[]; affectedRows: number | undefined }>;
  }

  /** Closes PGlite (it writes what it holds to the folder) and waits for its process to end. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      if (this.#child.exitCode !== null || this.#child.signalCode !== null) return;
      this.#busy();
      this.#child.send({ close: true });
      await this.#exited;
    })();
    return this.#closing;
  }

  #busy(): void {
    this.#child.ref();
    this.#child.channel?.ref();
  }

  #idle(): void {
    this.#child.unref();
    this.#child.channel?.unref();
  }

  #answer(reply: EmbeddedReply & { id: number }): void {
    const waiting = this.#waiting.get(reply.id);
    if (!waiting) return;
    this.#waiting.delete(reply.id);
    if (this.#waiting.size === 0 && !this.#closing) this.#idle();
    if ('error' in reply) waiting.reject(revive(reply.error));
    else waiting.resolve(reply as { rows: unknown[]; affectedRows: number | undefined });
  }

  #fail(error: Error): void {
    this.#failure ??= error;
    for (const waiting of this.#waiting.values()) waiting.reject(error);
    this.#waiting.clear();
  }
}
