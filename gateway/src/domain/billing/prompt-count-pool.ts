/**
 * Counts large prompts off the event loop (issue 18): a few worker threads, each counting one prompt at
 * a time with the same bounded tokenizer (prompt-count-worker.ts), behind a bounded queue. A prompt
 * shorter than OFF_LOOP_LENGTH is cheaper to count in place than to send to a thread. When every thread
 * is busy and the queue is full, the request is refused with `token_count_busy` (503) rather than made to
 * wait without end. Idle threads do not keep the process alive; they start on first use.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { AppError, defineErrors } from '../../errors.ts';
import { countPromptTexts, type PromptTexts, promptLength } from './estimate.ts';
import type { CountAnswer, CountJob } from './prompt-count-worker.ts';

export const PROMPT_COUNT_ERRORS = defineErrors({
  token_count_busy: {
    status: 503,
    message: {
      zh: '服务器繁忙，暂时无法计算提示词的令牌数，请稍后重试',
      en: 'The server is too busy to count the prompt tokens; retry shortly',
    },
  },
});

/** A full queue empties within about a second (a long count takes tens of milliseconds): retry then. */
const BUSY_RETRY_AFTER_SECONDS = 1;

/** The pool's queue is full: a refusal that passes by itself, so it carries `Retry-After`. */
export class PromptCountBusyError extends AppError {
  override name = 'PromptCountBusyError';
  readonly retryAfterSeconds = BUSY_RETRY_AFTER_SECONDS;

  constructor() {
    super(PROMPT_COUNT_ERRORS.token_count_busy);
  }
}

/** Prompts of at least this many UTF-16 units are counted in the pool (4 Ki units count in about 0.2 ms). */
export const OFF_LOOP_LENGTH = 4096;
/** Prompts waiting for a thread, beyond which new ones are refused. */
export const QUEUE_LIMIT = 64;
/** A thread idle this long stops, giving back the memory of its vocabularies (tens of MiB each). */
export const IDLE_THREAD_MS = 60_000;

// Node runs the worker's TypeScript as it runs the gateway's (type stripping), vitest included.
const WORKER_URL = new URL('./prompt-count-worker.ts', import.meta.url);

interface Pending {
  job: CountJob;
  resolve: (tokens: number) => void;
}

export class PromptCountPool {
  readonly #threads: number;
  readonly #queueLimit: number;
  readonly #idle: Worker[] = [];
  readonly #running = new Map<Worker, Pending>();
  readonly #queue: Pending[] = [];
  readonly #idleMs: number;
  readonly #idleTimers = new Map<Worker, NodeJS.Timeout>();
  #started = 0;
  #closed = false;

  constructor(threads: number, queueLimit: number, idleMs = IDLE_THREAD_MS) {
    this.#threads = Math.max(1, Math.floor(threads));
    this.#queueLimit = Math.max(0, Math.floor(queueLimit));
    this.#idleMs = idleMs;
  }

  /** The tokens of `prompt`; rejects with `token_count_busy` when the queue is full. */
  count(model: string, prompt: PromptTexts): Promise<number> {
    if (this.#closed) return Promise.resolve(countPromptTexts(model, prompt));
    const free = this.#idle.length > 0 || this.#started < this.#threads;
    if (!free && this.#queue.length >= this.#queueLimit) {
      return Promise.reject(new PromptCountBusyError());
    }
    return new Promise<number>((resolve) => {
      this.#queue.push({ job: { model, texts: prompt.texts }, resolve });
      this.#dispatch();
    }).then((tokens) => tokens + prompt.tokens);
  }

  /** Prompts waiting for a thread. */
  get waiting(): number {
    return this.#queue.length;
  }

  /** Threads running, busy or idle. */
  get threads(): number {
    return this.#started;
  }

  /** Stops the threads; prompts still waiting, and any counted later, are counted in place. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const timer of this.#idleTimers.values()) clearTimeout(timer);
    this.#idleTimers.clear();
    for (const pending of this.#queue.splice(0)) this.#countInPlace(pending);
    const workers = [...this.#idle, ...this.#running.keys()];
    this.#idle.length = 0;
    await Promise.all(workers.map((worker) => worker.terminate()));
  }

  #dispatch(): void {
    while (this.#queue.length > 0) {
      const worker = this.#idle.pop() ?? (this.#started < this.#threads ? this.#spawn() : undefined);
      if (!worker) return;
      clearTimeout(this.#idleTimers.get(worker));
      this.#idleTimers.delete(worker);
      const pending = this.#queue.shift()!;
      this.#running.set(worker, pending);
      // Referenced while it counts, so that a process waiting only for this count does not exit.
      worker.ref();
      worker.postMessage(pending.job);
    }
  }

  #spawn(): Worker {
    const worker = new Worker(WORKER_URL);
    this.#started++;
    worker.on('message', (answer: CountAnswer) => {
      const pending = this.#running.get(worker);
      this.#running.delete(worker);
      worker.unref();
      if (!this.#closed) {
        this.#idle.push(worker);
        this.#idleTimers.set(worker, setTimeout(() => this.#retire(worker), this.#idleMs).unref());
      }
      if (pending) {
        if ('tokens' in answer) pending.resolve(answer.tokens);
        else this.#countInPlace(pending);
      }
      this.#dispatch();
    });
    // A thread that fails (it should not) is replaced; its prompt is counted in place, still bounded.
    const lost = () => {
      const pending = this.#running.get(worker);
      this.#running.delete(worker);
      this.#forget(worker);
      if (pending) this.#countInPlace(pending);
      if (!this.#closed) this.#dispatch();
    };
    worker.once('error', lost);
    worker.once('exit', lost);
    return worker;
  }

  /** Stops an idle thread; the next prompt starts another. */
  #retire(worker: Worker): void {
    if (!this.#idle.includes(worker)) return;
    this.#forget(worker);
    void worker.terminate();
  }

  /** Takes a thread that is stopping out of the pool. */
  #forget(worker: Worker): void {
    const idleAt = this.#idle.indexOf(worker);
    if (idleAt >= 0) this.#idle.splice(idleAt, 1);
    clearTimeout(this.#idleTimers.get(worker));
    this.#idleTimers.delete(worker);
    this.#started--;
    worker.removeAllListeners();
  }

  #countInPlace(pending: Pending): void {
    pending.resolve(countPromptTexts(pending.job.model, { texts: pending.job.texts, tokens: 0 }));
  }
}

let shared: PromptCountPool | undefined;

/** The process's pool: one thread per core but one (the loop keeps a core), at most two. */
export function promptCountPool(): PromptCountPool {
  shared ??= new PromptCountPool(Math.min(2, availableParallelism() - 1), QUEUE_LIMIT);
  return shared;
}

/**
 * The count of `prompt`: of a short one, a function that counts it in place when called (well under a
 * millisecond, and only when needed); of a long one, the tokens, counted at once in the pool.
 */
export async function promptCount(model: string, prompt: PromptTexts): Promise<number | (() => number)> {
  if (promptLength(prompt) < OFF_LOOP_LENGTH) return () => countPromptTexts(model, prompt);
  return promptCountPool().count(model, prompt);
}
