import { setTimeout as sleep } from 'node:timers/promises';
import { HeldBuckets } from './held-buckets.ts';
import { logModelName } from './other.ts';
import { consumeLogRow, errorLogRow, PendingUsage } from './pending.ts';
import type {
  ConsumeRecord,
  ErrorRecord,
  FlushReport,
  UsageBatch,
  UsageLogger,
  UsageRecordBase,
  UsageSettings,
  UsageStats,
  UsageWriter,
} from './types.ts';
import { checkRecord, pgText } from './validate.ts';

export interface UsageRecorderConfig {
  writer: UsageWriter;
  settings: UsageSettings;
  /** A record waits at most this long before it is written. */
  flushIntervalMs?: number;
  /** Write at once when this many requests are pending. */
  batchSize?: number;
  /** Log rows per transaction; more wait for the next one. */
  maxBatchLogs?: number;
  /** Log rows held in memory at most (pending and in flight); beyond it new log rows are dropped. */
  maxQueuedLogs?: number;
  /** Backoff between retries of a failed write: doubles from the first value up to the second. */
  retryInitialMs?: number;
  retryMaxMs?: number;
  /** How long close() keeps retrying before it gives up and reports what was not written. */
  closeTimeoutMs?: number;
  logger?: UsageLogger;
  /** Clock in milliseconds (tests move it across hours). */
  now?: () => number;
  onFlush?: (report: FlushReport) => void;
  onDrop?: (logs: number) => void;
}

export class UsageRecorderClosedError extends Error {
  readonly code = 'USAGE_RECORDER_CLOSED';
  constructor(what: string) {
    super(`usage recorder is closed: ${what} was refused`);
    this.name = 'UsageRecorderClosedError';
  }
}

const silent: UsageLogger = { warn() {}, error() {} };

/**
 * Consume and error logs and the counters they drive, written in batches (DESIGN.md §3 step 7).
 *
 * The relay calls recordConsume / recordError once per request; both only touch memory. A flush runs
 * every `flushIntervalMs`, or at once when `batchSize` requests are pending, and writes one batch in
 * one transaction: multi-row INSERTs into logs, quota_data buckets merged per (user, model, hour),
 * one UPDATE per table for users (used_quota, request_count), tokens (used_quota, accessed_time) and
 * channels (used_quota). Balances are the ledger's: a record with a `ledgerCharge` has its quota taken off
 * them in the same transaction, through the ledger (databaseUsageWriter, QuotaLedger.writeLogged). The usage dashboard's
 * buckets are the exception to "every flush": they are held and added up in memory and written every
 * DataExportInterval (settings.dataExportIntervalMs), by their own timer when no flush comes by.
 *
 * Failures: the failed batch is kept and retried whole (it was not applied: one transaction), with
 * exponential backoff capped at `retryMaxMs`, for as long as it takes; records keep arriving meanwhile.
 * Memory is bounded: counters are merged per row, so they grow with distinct users, tokens, channels
 * and (user, model, hour) buckets, never with requests; log rows are capped at `maxQueuedLogs`, and an
 * uncharged log row (an error log, a free request) beyond the cap is dropped and counted (`droppedLogs`,
 * `onDrop`) while its counters are kept. A consume log that carries quota is never dropped: it is the
 * receipt of a charge, and the books (consume logs == used quota) must hold after any outage.
 * A batch never splits a request's log from its counters and charges: past `maxBatchLogs` log rows the
 * pending usage is sealed as a batch of its own and the next requests start another, so a crash
 * between two batches leaves each one whole.
 * Dropping rather than blocking: records arrive after the response has been sent, so waiting here
 * would not slow any client, only hold more memory per request; `stats().saturated` lets the caller
 * shed load (e.g. fail readiness) instead.
 *
 * close() refuses new records and writes everything queued, held buckets included, retrying up to
 * `closeTimeoutMs`.
 */
export class UsageRecorder {
  readonly #writer: UsageWriter;
  readonly #settings: UsageSettings;
  readonly #intervalMs: number;
  readonly #batchSize: number;
  readonly #maxBatchLogs: number;
  readonly #maxQueuedLogs: number;
  readonly #retryInitialMs: number;
  readonly #retryMaxMs: number;
  readonly #closeTimeoutMs: number;
  readonly #logger: UsageLogger;
  readonly #now: () => number;
  readonly #onFlush: ((report: FlushReport) => void) | undefined;
  readonly #onDrop: ((logs: number) => void) | undefined;

  #pending = new PendingUsage();
  /** Batches sealed at `maxBatchLogs` log rows, oldest first, waiting for the drain. */
  #sealed: UsageBatch[] = [];
  /** Dashboard buckets taken from flushed batches, waiting for their export. */
  #held = new HeldBuckets();
  #exportTimer: NodeJS.Timeout | undefined;
  /** The batch being written, or the failed one waiting for its retry. */
  #inflight: UsageBatch | undefined;
  #draining: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;
  /** flush() calls in progress: while any, the drain goes on until nothing is pending. */
  #forced = 0;
  #closed = false;
  #closing: Promise<void> | undefined;
  /** Set when close() gave up: the drain stops and the backoff sleep is cut short. */
  #abandon = new AbortController();

  #droppedLogs = 0;
  #flushes = 0;
  #failedFlushes = 0;
  #consecutiveFailures = 0;
  #lastFlushDurationMs = 0;
  #saturated = false;

  constructor(config: UsageRecorderConfig) {
    this.#writer = config.writer;
    this.#settings = config.settings;
    this.#intervalMs = config.flushIntervalMs ?? 1000;
    this.#batchSize = config.batchSize ?? 500;
    this.#maxBatchLogs = config.maxBatchLogs ?? 2000;
    this.#maxQueuedLogs = config.maxQueuedLogs ?? 20_000;
    this.#retryInitialMs = config.retryInitialMs ?? 100;
    this.#retryMaxMs = config.retryMaxMs ?? 10_000;
    this.#closeTimeoutMs = config.closeTimeoutMs ?? 30_000;
    this.#logger = config.logger ?? silent;
    this.#now = config.now ?? Date.now;
    this.#onFlush = config.onFlush;
    this.#onDrop = config.onDrop;
  }

  /** Queues a settled request: its consume log (when LogConsumeEnabled), counters and hourly bucket. */
  recordConsume(record: ConsumeRecord): void {
    this.#accept(record, 'consume');
    const charged = record.quota !== 0;
    this.#addConsume(this.#pending, record, (row) => this.#queueLog(row, charged));
    this.#scheduled();
  }

  /**
   * What recordConsume would queue for this record (log row, counters, hourly bucket, observation),
   * as a batch for a caller that writes it in its own transaction (writeUsageBatch) instead.
   */
  batchOf(record: ConsumeRecord): UsageBatch {
    this.#accept(record, 'consume');
    const pending = new PendingUsage();
    this.#addConsume(pending, record, (row) => pending.addLog(row()));
    return pending.take()!;
  }

  #addConsume(
    pending: PendingUsage,
    record: ConsumeRecord,
    addLog: (row: () => Parameters<PendingUsage['addLog']>[0]) => void,
  ): void {
    const at = record.at ?? this.#seconds();
    const modelName = pgText(logModelName(record.modelName));
    if (this.#settings.logConsumeEnabled()) addLog(() => consumeLogRow(record, at, modelName));
    pending.addCounters(record, at, modelName, this.#settings.dataExportEnabled());
  }

  /** Queues an error log when error logs are on (ERROR_LOG_ENABLED); an error adds to no counter. */
  recordError(record: ErrorRecord): void {
    this.#accept(record, 'error');
    if (!this.#settings.errorLogEnabled()) return;
    const at = record.at ?? this.#seconds();
    this.#queueLog(() => errorLogRow(record, at, logModelName(record.modelName)), false);
    this.#scheduled();
  }

  /**
   * Writes until nothing is queued (records arriving meanwhile included), retrying until the database
   * takes it. For close() and tests; the relay never waits on it.
   */
  async flush(): Promise<void> {
    this.#forced++;
    try {
      while (!this.#pending.empty || this.#sealed.length > 0 || this.#inflight || this.#held.size > 0) {
        if (this.#abandon.signal.aborted) throw new UsageRecorderClosedError('the flush');
        await this.#kick();
      }
    } finally {
      this.#forced--;
    }
  }

  /**
   * Refuses further records and writes what is queued. Rejects, naming what was not written, if the
   * database did not take it within `closeTimeoutMs`. Idempotent.
   */
  close(): Promise<void> {
    this.#closed = true;
    this.#closing ??= this.#closeWithin(this.#closeTimeoutMs);
    return this.#closing;
  }

  stats(): UsageStats {
    return {
      queuedLogs: this.#queuedLogs(),
      queuedRecords: this.#queuedRecords(),
      droppedLogs: this.#droppedLogs,
      flushes: this.#flushes,
      failedFlushes: this.#failedFlushes,
      consecutiveFailures: this.#consecutiveFailures,
      lastFlushDurationMs: this.#lastFlushDurationMs,
      saturated: this.#saturated,
    };
  }

  #accept(record: UsageRecordBase, kind: string): void {
    if (this.#closed) throw new UsageRecorderClosedError(`the ${kind} record of request '${record.requestId}'`);
    // A value the database would refuse must fail here, in the caller: inside a batch it would fail
    // the batch on every retry and hold up every other record behind it.
    checkRecord(record);
  }

  #seconds(): number {
    return Math.floor(this.#now() / 1000);
  }

  #queuedLogs(): number {
    let logs = this.#pending.logs + (this.#inflight?.logs.length ?? 0);
    for (const batch of this.#sealed) logs += batch.logs.length;
    return logs;
  }

  #queuedRecords(): number {
    let records = this.#pending.records + (this.#inflight?.records ?? 0);
    for (const batch of this.#sealed) records += batch.records;
    return records;
  }

  #queueLog(row: () => Parameters<PendingUsage['addLog']>[0], charged: boolean): void {
    if (!charged && this.#queuedLogs() >= this.#maxQueuedLogs) {
      this.#droppedLogs++;
      if (!this.#saturated) {
        this.#saturated = true;
        this.#logger.error(
          { maxQueuedLogs: this.#maxQueuedLogs, consecutiveFailures: this.#consecutiveFailures },
          'usage log queue full: dropping uncharged log rows (counters are kept) until the database catches up',
        );
      }
      this.#report(() => this.#onDrop?.(1));
      return;
    }
    this.#pending.addLog(row());
  }

  /** After a record: write now if the batch is full, else make sure the timer will. */
  #scheduled(): void {
    if (this.#pending.logs >= this.#maxBatchLogs) this.#sealed.push(this.#pending.take()!);
    if (this.#sealed.length > 0 || this.#pending.records >= this.#batchSize || this.#pending.logs >= this.#batchSize)
      void this.#kick();
    else this.#arm();
  }

  #arm(): void {
    this.#armExport();
    if (this.#timer || this.#draining || this.#abandon.signal.aborted) return;
    if (this.#pending.empty && this.#sealed.length === 0) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#kick();
    }, this.#intervalMs);
  }

  /** Held buckets and no flush to take them: a drain when they are due. */
  #armExport(): void {
    const dueAt = this.#held.dueAt;
    if (this.#exportTimer || dueAt === undefined || this.#closed || this.#abandon.signal.aborted) return;
    this.#exportTimer = setTimeout(
      () => {
        this.#exportTimer = undefined;
        void this.#kick();
      },
      Math.max(0, dueAt - this.#now()),
    );
  }

  /**
   * The next batch to write: what is pending, with the dashboard buckets held back (and those held
   * before added in) until their export is due or a flush() asks for everything.
   */
  #nextBatch(): UsageBatch | undefined {
    const batch = this.#sealed.shift() ?? this.#pending.take();
    const intervalMs = this.#settings.dataExportIntervalMs?.();
    if (intervalMs === undefined) return batch;
    const now = this.#now();
    if (batch) {
      this.#held.add(batch.quotaData, now, intervalMs);
      batch.quotaData = [];
    }
    if (this.#held.size === 0 || (this.#forced === 0 && !this.#held.due(now))) return batch;
    if (this.#exportTimer) {
      clearTimeout(this.#exportTimer);
      this.#exportTimer = undefined;
    }
    const quotaData = this.#held.take();
    return batch
      ? { ...batch, quotaData }
      : { logs: [], users: [], tokens: [], channels: [], quotaData, observations: [], charges: [], records: 0 };
  }

  /** Starts the drain unless one runs; answers the running drain. */
  #kick(): Promise<void> {
    if (this.#timer) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    this.#draining ??= this.#drain().finally(() => {
      this.#draining = undefined;
      this.#arm();
    });
    return this.#draining;
  }

  async #drain(): Promise<void> {
    for (;;) {
      if (this.#abandon.signal.aborted) return;
      const batch = this.#inflight ?? this.#nextBatch();
      if (!batch) return;
      this.#inflight = batch;
      const started = performance.now();
      try {
        await this.#writer.write(batch);
      } catch (error) {
        this.#failed(batch, error, performance.now() - started);
        await this.#backoff();
        continue;
      }
      this.#succeeded(batch, performance.now() - started);
      const more =
        this.#sealed.length > 0 || this.#pending.records >= this.#batchSize || this.#pending.logs >= this.#batchSize;
      if (!more && this.#forced === 0) return;
    }
  }

  #succeeded(batch: UsageBatch, durationMs: number): void {
    this.#inflight = undefined;
    this.#flushes++;
    this.#lastFlushDurationMs = durationMs;
    if (this.#consecutiveFailures > 0) {
      this.#logger.warn({ failures: this.#consecutiveFailures }, 'usage writes recovered');
      this.#consecutiveFailures = 0;
    }
    if (this.#saturated && this.#queuedLogs() < this.#maxQueuedLogs) this.#saturated = false;
    this.#report(() => this.#onFlush?.({ ok: true, durationMs, logs: batch.logs.length, records: batch.records }));
  }

  #failed(batch: UsageBatch, error: unknown, durationMs: number): void {
    this.#failedFlushes++;
    this.#consecutiveFailures++;
    this.#lastFlushDurationMs = durationMs;
    this.#logger.warn(
      {
        err: error,
        attempt: this.#consecutiveFailures,
        queuedLogs: this.#queuedLogs(),
        queuedRecords: this.#queuedRecords(),
      },
      'usage batch write failed; retrying',
    );
    this.#report(() =>
      this.#onFlush?.({ ok: false, durationMs, logs: batch.logs.length, records: batch.records, error }),
    );
  }

  async #backoff(): Promise<void> {
    const exp = this.#retryInitialMs * 2 ** Math.min(this.#consecutiveFailures - 1, 30);
    // Jitter: pods that lost the database together should not all come back in the same millisecond.
    const delay = Math.min(this.#retryMaxMs, exp) * (0.5 + Math.random() / 2);
    try {
      await sleep(delay, undefined, { signal: this.#abandon.signal });
    } catch {
      // Aborted by close(): the drain checks the signal and stops.
    }
  }

  /** Metrics hooks must never break the write loop. */
  #report(call: () => void): void {
    try {
      call();
    } catch (error) {
      this.#logger.warn({ err: error }, 'usage metrics hook failed');
    }
  }

  async #closeWithin(timeoutMs: number): Promise<void> {
    if (this.#timer) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    if (this.#exportTimer) {
      clearTimeout(this.#exportTimer);
      this.#exportTimer = undefined;
    }
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    try {
      // An abandoned flush rejects; the outcome is reported below, not as an unhandled rejection.
      const flushed = this.flush().then(
        () => 'done' as const,
        () => 'abandoned' as const,
      );
      const outcome = await Promise.race([flushed, timedOut]);
      if (outcome === 'done') return;
    } finally {
      clearTimeout(timer);
    }
    const lost = { logs: this.#queuedLogs(), records: this.#queuedRecords() };
    this.#abandon.abort();
    this.#logger.error(lost, 'usage recorder closed with unwritten usage: the database did not answer in time');
    throw new Error(
      `usage recorder closed after ${timeoutMs} ms with ${lost.logs} log rows and the counters of ${lost.records} requests unwritten`,
    );
  }
}
