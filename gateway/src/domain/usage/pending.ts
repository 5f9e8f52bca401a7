import type { Insertable } from 'kysely';
import type { LogsTable } from '../../store/database.ts';
import { LOG_TYPE } from '../../store/repositories/logs.ts';
import { hourOf } from '../../store/repositories/quota-data.ts';
import type {
  ChannelObservation,
  ChannelUsage,
  QuotaBucket,
  TokenUsage,
  UserUsage,
} from '../../store/repositories/usage.ts';
import type { LoggedCharge } from '../ledger/ledger.ts';
import { byBucketKey } from './held-buckets.ts';
import type { ConsumeRecord, ErrorRecord, UsageBatch, UsageRecordBase } from './types.ts';
import { pgText } from './validate.ts';

/**
 * Usage recorded and not yet taken by a flush. Counters are merged as they arrive (one entry per user,
 * token, channel and (user, model, hour)), so their memory grows with distinct rows, not with requests;
 * log rows are kept one per request.
 */
export class PendingUsage {
  #logs: Insertable<LogsTable>[] = [];
  #users = new Map<number, UserUsage>();
  #tokens = new Map<number, TokenUsage>();
  #channels = new Map<number, ChannelUsage>();
  #buckets = new Map<string, QuotaBucket>();
  #observations = new Map<string, ChannelObservation>();
  #charges = new Map<string, LoggedCharge>();
  #records = 0;

  get logs(): number {
    return this.#logs.length;
  }

  /** Requests whose counters are here. */
  get records(): number {
    return this.#records;
  }

  get empty(): boolean {
    return this.#records === 0 && this.#logs.length === 0;
  }

  addLog(row: Insertable<LogsTable>): void {
    this.#logs.push(row);
  }

  /** Counts a request and merges what it adds to the counters. */
  addCounters(record: ConsumeRecord, at: number, modelName: string, withQuotaData: boolean): void {
    this.#records++;
    const c = record.counters ?? {};
    const userQuota = c.userQuota ?? record.quota;
    const requests = c.requests ?? 1;
    if (record.userId > 0 && (userQuota !== 0 || requests !== 0)) {
      const u = this.#users.get(record.userId);
      if (u) {
        u.quota += userQuota;
        u.requests += requests;
      } else this.#users.set(record.userId, { id: record.userId, quota: userQuota, requests });
    }
    if (record.tokenId > 0) {
      const quota = c.tokenQuota ?? record.quota;
      const t = this.#tokens.get(record.tokenId);
      if (t) {
        t.quota += quota;
        t.accessedAt = Math.max(t.accessedAt, at);
      } else this.#tokens.set(record.tokenId, { id: record.tokenId, quota, accessedAt: at });
    }
    const channelQuota = c.channelQuota ?? record.quota;
    if (record.channelId > 0 && channelQuota !== 0) {
      const ch = this.#channels.get(record.channelId);
      if (ch) ch.quota += channelQuota;
      else this.#channels.set(record.channelId, { id: record.channelId, quota: channelQuota });
    }
    if (withQuotaData && record.userId > 0) {
      const hour = hourOf(at);
      const key = `${record.userId}\u0000${hour}\u0000${modelName}`;
      const tokens = record.promptTokens + record.completionTokens;
      const b = this.#buckets.get(key);
      if (b) {
        b.quota += record.quota;
        b.tokens += tokens;
        b.count += 1;
        b.username = pgText(record.username);
      } else {
        this.#buckets.set(key, {
          userId: record.userId,
          username: pgText(record.username),
          modelName,
          hour,
          quota: record.quota,
          tokens,
          count: 1,
        });
      }
    }
    if (record.clientType !== undefined && record.channelId > 0) this.#observe(record, record.clientType, at);
    if (record.quota > 0) for (const account of record.ledgerCharge ?? []) this.#charge(account, record.quota);
  }

  #charge(account: LoggedCharge['account'], quota: number): void {
    const key = `${account.kind}:${account.id}`;
    const c = this.#charges.get(key);
    if (c) c.amount += quota;
    else this.#charges.set(key, { account, amount: quota });
  }

  /** One more request of this client type in this group on this channel (upstream detection). */
  #observe(record: ConsumeRecord, type: string, at: number): void {
    const group = pgText(record.group);
    const clientType = pgText(type);
    const key = `${record.channelId}\u0000${group}\u0000${clientType}`;
    const o = this.#observations.get(key);
    if (o) {
      o.count += 1;
      o.firstSeen = Math.min(o.firstSeen, at);
      o.lastSeen = Math.max(o.lastSeen, at);
    } else {
      this.#observations.set(key, {
        channelId: record.channelId,
        group,
        clientType,
        count: 1,
        firstSeen: at,
        lastSeen: at,
      });
    }
  }

  /** Everything pending, as one batch: log rows never leave without the counters and charges they go with. */
  take(): UsageBatch | undefined {
    if (this.empty) return undefined;
    const logs = this.#logs;
    this.#logs = [];
    const byId = (a: { id: number }, b: { id: number }) => a.id - b.id;
    const batch: UsageBatch = {
      logs,
      users: [...this.#users.values()].sort(byId),
      tokens: [...this.#tokens.values()].sort(byId),
      channels: [...this.#channels.values()].sort(byId),
      quotaData: [...this.#buckets.values()].sort(byBucketKey),
      observations: [...this.#observations.values()].sort(
        (a, b) =>
          a.channelId - b.channelId ||
          (a.group < b.group ? -1 : a.group > b.group ? 1 : 0) ||
          (a.clientType < b.clientType ? -1 : a.clientType > b.clientType ? 1 : 0),
      ),
      charges: [...this.#charges.values()],
      records: this.#records,
    };
    this.#charges = new Map();
    this.#users = new Map();
    this.#tokens = new Map();
    this.#channels = new Map();
    this.#buckets = new Map();
    this.#observations = new Map();
    this.#records = 0;
    return batch;
  }
}

/** A log row, built as one object: the relay queues one per request. */
function logRow(
  record: UsageRecordBase,
  type: number,
  at: number,
  modelName: string,
  quota: number,
  promptTokens: number,
  completionTokens: number,
): Insertable<LogsTable> {
  return {
    user_id: record.userId,
    created_at: at,
    type,
    content: pgText(record.content),
    username: pgText(record.username),
    token_name: pgText(record.tokenName),
    model_name: pgText(modelName),
    use_time: record.useTimeSeconds,
    is_stream: record.isStream,
    channel_id: record.channelId,
    channel_name: pgText(record.channelName),
    token_id: record.tokenId,
    group: pgText(record.group),
    ip: pgText(record.ip),
    request_id: pgText(record.requestId),
    // Serialised now: the caller may reuse its object, and a string is what the row holds anyway.
    // JSON.stringify escapes NUL inside strings, so only a string passed in needs cleaning.
    other: typeof record.other === 'string' ? pgText(record.other) : JSON.stringify(record.other),
    quota,
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
  };
}

export function consumeLogRow(record: ConsumeRecord, at: number, modelName: string): Insertable<LogsTable> {
  return logRow(record, LOG_TYPE.consume, at, modelName, record.quota, record.promptTokens, record.completionTokens);
}

export function errorLogRow(record: ErrorRecord, at: number, modelName: string): Insertable<LogsTable> {
  return logRow(record, LOG_TYPE.error, at, modelName, 0, record.promptTokens ?? 0, record.completionTokens ?? 0);
}
