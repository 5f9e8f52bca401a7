import type { Insertable } from 'kysely';
import type { LogsTable } from '../../store/database.ts';
import type { AccountRef } from '../../store/repositories/quota-leases.ts';
import type {
  ChannelObservation,
  ChannelUsage,
  QuotaBucket,
  TokenUsage,
  UserUsage,
} from '../../store/repositories/usage.ts';
import type { LoggedCharge } from '../ledger/ledger.ts';

/** What every usage log row carries (reference §5.7). */
export interface UsageRecordBase {
  userId: number;
  username: string;
  /** 0 when the request had no API key (playground). */
  tokenId: number;
  tokenName: string;
  /** 0 when no channel was reached. */
  channelId: number;
  channelName: string;
  /** The model the client asked for (billing and logs use it, not the mapped upstream model). */
  modelName: string;
  /** The group the request was billed in. */
  group: string;
  useTimeSeconds: number;
  isStream: boolean;
  /** The client IP, or '' unless the user's setting record_ip_log is on (the relay decides). */
  ip: string;
  requestId: string;
  content: string;
  /** The `other` JSON (see other.ts): an object, or a string already serialised. */
  other: Record<string, unknown> | string;
  /** Unix seconds; defaults to the recorder's clock when recorded. */
  at?: number;
}

/** A settled request (log type 2). */
export interface ConsumeRecord extends UsageRecordBase {
  quota: number;
  promptTokens: number;
  completionTokens: number;
  /**
   * The kind of client that sent the request (relay/client-type.ts: a small fixed set, never the raw
   * User-Agent). When present, the request counts in the channel's upstream detection observations
   * (per channel, group and client type); absent (channel tests), it does not.
   */
  clientType?: string;
  /**
   * Overrides of what the request adds to the running counters. By default the quota goes to the
   * user, the token and the channel (each when its id is > 0) and the user's request count grows by 1.
   */
  counters?: {
    userQuota?: number;
    requests?: number;
    tokenQuota?: number;
    channelQuota?: number;
  };
  /**
   * The ledger accounts `quota` was settled on with `withLog` (QuotaLedger.chargedAccounts): the batch
   * that writes this record takes it off their balances in the same transaction (QuotaLedger.writeLogged).
   */
  ledgerCharge?: readonly AccountRef[];
}

/** A failed request (log type 5): no quota, no counters. */
export interface ErrorRecord extends UsageRecordBase {
  promptTokens?: number;
  completionTokens?: number;
}

/** Everything one flush writes, in one transaction. Counter rows are distinct and sorted by id. */
export interface UsageBatch {
  logs: Insertable<LogsTable>[];
  users: UserUsage[];
  tokens: TokenUsage[];
  channels: ChannelUsage[];
  quotaData: QuotaBucket[];
  /** Requests per (channel, group, client type), distinct and sorted by that key. */
  observations: ChannelObservation[];
  /** Logged spending summed per ledger account (records with `ledgerCharge`). */
  charges: LoggedCharge[];
  /** How many recorded requests this batch completes (for metrics). */
  records: number;
}

/** Writes a batch atomically: all of it or nothing, so that a failed batch can be retried whole. */
export interface UsageWriter {
  write(batch: UsageBatch): Promise<void>;
}

/** The switches read when a record arrives (so a change applies from the next request on). */
export interface UsageSettings {
  /** Option LogConsumeEnabled: write consume logs (counters are updated either way). */
  logConsumeEnabled(): boolean;
  /** Option DataExportEnabled: feed the hourly quota_data buckets. */
  dataExportEnabled(): boolean;
  /**
   * Option DataExportInterval in milliseconds: the quota_data buckets are added up in memory and
   * written this often (and by flush and close). Absent: with every flush.
   */
  dataExportIntervalMs?(): number;
  /** ERROR_LOG_ENABLED (environment, default false, as in new-api): write error logs. */
  errorLogEnabled(): boolean;
}

/** What a flush reports to metrics. */
export interface FlushReport {
  ok: boolean;
  durationMs: number;
  logs: number;
  records: number;
  error?: unknown;
}

export interface UsageStats {
  /** Log rows recorded and not yet written (pending and in flight). */
  queuedLogs: number;
  /** Requests whose counters are not yet written. */
  queuedRecords: number;
  /** Uncharged log rows dropped because the queue was full (their counters kept; a charged row is never dropped). */
  droppedLogs: number;
  flushes: number;
  failedFlushes: number;
  /** Failures since the last successful flush (0 when healthy). */
  consecutiveFailures: number;
  lastFlushDurationMs: number;
  /** True while the log queue is at its cap: the database is not keeping up. */
  saturated: boolean;
}

/** The subset of pino's logger the recorder uses. */
export interface UsageLogger {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}
