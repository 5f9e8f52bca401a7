import type {
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { createTestStore, hasPostgres } from '../../../../tests/support/database.ts';
import { sleep, waitFor } from '../../../../tests/support/wait.ts';
import type { Store } from '../../store/index.ts';
import { LOG_TYPE } from '../../store/repositories/logs.ts';
import { hourOf } from '../../store/repositories/quota-data.ts';
import { buildConsumeOther } from './other.ts';
import { UsageRecorder, UsageRecorderClosedError, type UsageRecorderConfig } from './recorder.ts';
import type { ConsumeRecord, ErrorRecord, UsageBatch, UsageSettings, UsageWriter } from './types.ts';
import { databaseUsageWriter, writeUsageBatch } from './writer.ts';

/** Counts the statements sent through a Kysely instance, by kind and table; can fail chosen ones. */
class Statements implements KyselyPlugin {
  seen: string[] = [];
  failWhen: ((statement: string) => boolean) | undefined;

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const node = args.node;
    let statement: string = node.kind;
    if (node.kind === 'InsertQueryNode') statement = `insert ${node.into?.table.identifier.name}`;
    // The log INSERTs and counter UPDATEs are raw SQL: name them by their first words ('insert into logs'
    // as 'insert logs').
    if (node.kind === 'RawNode') {
      const words = node.sqlFragments.join('?').trim().split(/\s+/);
      statement = words[0] === 'insert' ? `insert ${words[2]}` : words.slice(0, 2).join(' ');
    }
    this.seen.push(statement);
    if (this.failWhen?.(statement)) throw new Error(`injected failure at ${statement}`);
    return node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }

  count(statement: string): number {
    return this.seen.filter((s) => s === statement).length;
  }
}

const HOUR = 1_700_002_800;
const USERS = 3;
const TOKENS_PER_USER = 2;
const CHANNELS = 2;
const MODELS = ['gpt-4o', 'claude-sonnet-4'];
const BALANCE = 1_000_000;

let store: Store;
let dispose: () => Promise<void>;
let url: string | undefined;
let userIds: number[] = [];
let tokenIds: number[][] = [];
let channelIds: number[] = [];

beforeAll(async () => {
  ({ store, dispose, url } = await createTestStore());
});
afterAll(() => dispose());

beforeEach(async () => {
  const db = store.db;
  for (const table of ['logs', 'quota_data', 'channel_observations', 'tokens', 'channels', 'users'] as const)
    await db.deleteFrom(table).execute();
  userIds = [];
  tokenIds = [];
  for (let u = 0; u < USERS; u++) {
    const user = await db
      .insertInto('users')
      .values({ username: `user${u}`, password: 'x', created_at: HOUR, quota: BALANCE })
      .returning('id')
      .executeTakeFirstOrThrow();
    userIds.push(user.id);
    const tokens = await db
      .insertInto('tokens')
      .values(
        Array.from({ length: TOKENS_PER_USER }, (_, t) => ({
          user_id: user.id,
          key_hmac: `h-${u}-${t}`,
          key_encrypted: 'x',
          name: `token${t}`,
          created_time: HOUR,
        })),
      )
      .returning('id')
      .execute();
    tokenIds.push(tokens.map((t) => t.id));
  }
  const channels = await db
    .insertInto('channels')
    .values(
      Array.from({ length: CHANNELS }, (_, c) => ({ type: 1, name: `ch${c}`, key_encrypted: 'x', created_time: HOUR })),
    )
    .returning('id')
    .execute();
  channelIds = channels.map((c) => c.id);
});

/** Request number i: spread over users, tokens, channels and models; quotas vary so sums are telling. */
function consume(i: number, over: Partial<ConsumeRecord> = {}): ConsumeRecord {
  const u = i % USERS;
  const t = Math.floor(i / USERS) % TOKENS_PER_USER;
  return {
    userId: userIds[u]!,
    username: `user${u}`,
    tokenId: tokenIds[u]![t]!,
    tokenName: `token${t}`,
    channelId: channelIds[i % CHANNELS]!,
    channelName: `ch${i % CHANNELS}`,
    modelName: MODELS[i % MODELS.length]!,
    group: 'default',
    useTimeSeconds: i % 7,
    isStream: i % 2 === 0,
    ip: `10.0.0.${i % 250}`,
    requestId: `req-${i}`,
    content: `request ${i}`,
    other: buildConsumeOther({
      price: {
        modelRatio: 2.5,
        completionRatio: 4,
        cacheRatio: 0.5,
        cacheCreationRatio: 1.25,
        imageRatio: 1,
        audioRatio: 1,
        audioCompletionRatio: 1,
        groupRatio: 1,
        configured: true,
      },
      usage: { promptTokens: 100 + i, completionTokens: 10 + (i % 13) },
      firstResponseMs: i,
      requestedModel: MODELS[i % MODELS.length]!,
      upstreamModel: MODELS[i % MODELS.length]!,
      usedChannels: [channelIds[i % CHANNELS]!],
    }),
    quota: 1000 + i * 7,
    promptTokens: 100 + i,
    completionTokens: 10 + (i % 13),
    ...over,
  };
}

function settings(over: Partial<Record<keyof UsageSettings, boolean>> = {}): UsageSettings {
  const s = { logConsumeEnabled: true, dataExportEnabled: true, errorLogEnabled: true, ...over };
  return {
    logConsumeEnabled: () => s.logConsumeEnabled,
    dataExportEnabled: () => s.dataExportEnabled,
    errorLogEnabled: () => s.errorLogEnabled,
  };
}

const recorders: UsageRecorder[] = [];
function recorder(config: Partial<UsageRecorderConfig> & Pick<UsageRecorderConfig, 'writer'>): UsageRecorder {
  const r = new UsageRecorder({
    settings: settings(),
    flushIntervalMs: 60_000,
    retryInitialMs: 5,
    retryMaxMs: 40,
    // A test that fails while its writer is down must not hold the teardown for the default 30 s.
    closeTimeoutMs: 2000,
    ...config,
  });
  recorders.push(r);
  return r;
}
afterAll(async () => {
  await Promise.allSettled(recorders.map((r) => r.close()));
});

/** What the database holds, summed per user, token, channel and bucket. */
async function totals() {
  const db = store.db;
  const users = await db.selectFrom('users').select(['id', 'quota', 'used_quota', 'request_count']).execute();
  const tokens = await db.selectFrom('tokens').select(['id', 'used_quota', 'accessed_time']).execute();
  const channels = await db.selectFrom('channels').select(['id', 'used_quota']).execute();
  const buckets = await db.selectFrom('quota_data').selectAll().execute();
  return {
    users: new Map(users.map((u) => [u.id, u])),
    tokens: new Map(tokens.map((t) => [t.id, t])),
    channels: new Map(channels.map((c) => [c.id, c])),
    buckets: new Map(buckets.map((b) => [`${b.user_id}|${b.model_name}|${b.created_at}`, b])),
  };
}

/** The sums the records add up to, computed independently of the recorder. */
function expected(records: ConsumeRecord[], atOf: (r: ConsumeRecord) => number) {
  const add = (m: Map<any, number>, k: unknown, v: number) => m.set(k, (m.get(k) ?? 0) + v);
  const userQuota = new Map<number, number>();
  const userRequests = new Map<number, number>();
  const tokenQuota = new Map<number, number>();
  const tokenAccess = new Map<number, number>();
  const channelQuota = new Map<number, number>();
  const buckets = new Map<string, { quota: number; count: number; token_used: number }>();
  for (const r of records) {
    add(userQuota, r.userId, r.quota);
    add(userRequests, r.userId, 1);
    add(tokenQuota, r.tokenId, r.quota);
    tokenAccess.set(r.tokenId, Math.max(tokenAccess.get(r.tokenId) ?? 0, atOf(r)));
    add(channelQuota, r.channelId, r.quota);
    const key = `${r.userId}|${r.modelName}|${hourOf(atOf(r))}`;
    const b = buckets.get(key) ?? { quota: 0, count: 0, token_used: 0 };
    b.quota += r.quota;
    b.count += 1;
    b.token_used += r.promptTokens + r.completionTokens;
    buckets.set(key, b);
  }
  return { userQuota, userRequests, tokenQuota, tokenAccess, channelQuota, buckets };
}

async function expectCounters(records: ConsumeRecord[], atOf: (r: ConsumeRecord) => number) {
  const want = expected(records, atOf);
  const got = await totals();
  for (const id of userIds) {
    const user = got.users.get(id)!;
    expect(user.used_quota).toBe(want.userQuota.get(id) ?? 0);
    expect(user.request_count).toBe(want.userRequests.get(id) ?? 0);
    // The balance belongs to the ledger.
    expect(user.quota).toBe(BALANCE);
  }
  for (const id of tokenIds.flat()) {
    expect(got.tokens.get(id)!.used_quota).toBe(want.tokenQuota.get(id) ?? 0);
    expect(got.tokens.get(id)!.accessed_time).toBe(want.tokenAccess.get(id) ?? 0);
  }
  for (const id of channelIds) expect(got.channels.get(id)!.used_quota).toBe(want.channelQuota.get(id) ?? 0);
  return { want, got };
}

describe('UsageRecorder', () => {
  it('writes 1,000 records with a handful of statements: every row, column and other key, and exact counters', async () => {
    const statements = new Statements();
    let clock = (HOUR + 3000) * 1000;
    const r = recorder({ writer: databaseUsageWriter(store.db.withPlugin(statements)), now: () => clock });
    const records: ConsumeRecord[] = [];
    const at = new Map<string, number>();
    for (let i = 0; i < 1000; i++) {
      // The second half lands in the next hour: two buckets per (user, model).
      if (i === 600) clock = (HOUR + 3600 + 60) * 1000;
      const rec = consume(i);
      records.push(rec);
      at.set(rec.requestId, Math.floor(clock / 1000));
      r.recordConsume(rec);
    }
    await r.flush();

    const flushes = r.stats().flushes;
    expect(flushes).toBeGreaterThanOrEqual(1);
    expect(flushes).toBeLessThanOrEqual(2);
    // Log rows go 100 per INSERT; one INSERT per bucket table and one UPDATE per counter table per flush.
    const logInserts = statements.count('insert logs');
    expect(logInserts).toBeGreaterThanOrEqual(10);
    expect(logInserts).toBeLessThanOrEqual(9 + flushes);
    expect(statements.count('insert quota_data')).toBe(flushes);
    expect(statements.count('update users')).toBe(flushes);
    expect(statements.count('update tokens')).toBe(flushes);
    expect(statements.count('update channels')).toBe(flushes);
    expect(statements.seen.length).toBe(logInserts + 4 * flushes);

    const rows = await store.db.selectFrom('logs').selectAll().orderBy('id').execute();
    expect(rows).toHaveLength(1000);
    rows.forEach((row, n) => {
      const rec = records[n]!;
      expect(row).toEqual({
        id: row.id,
        user_id: rec.userId,
        created_at: at.get(rec.requestId),
        type: LOG_TYPE.consume,
        content: rec.content,
        username: rec.username,
        token_name: rec.tokenName,
        model_name: rec.modelName,
        quota: rec.quota,
        prompt_tokens: rec.promptTokens,
        completion_tokens: rec.completionTokens,
        use_time: rec.useTimeSeconds,
        is_stream: rec.isStream,
        channel_id: rec.channelId,
        channel_name: rec.channelName,
        token_id: rec.tokenId,
        group: rec.group,
        ip: rec.ip,
        request_id: rec.requestId,
        other: row.other,
      });
      expect(JSON.parse(row.other)).toEqual(rec.other);
    });

    const { want, got } = await expectCounters(records, (rec) => at.get(rec.requestId)!);
    expect(got.buckets.size).toBe(want.buckets.size);
    expect(want.buckets.size).toBe(USERS * MODELS.length * 2);
    for (const [key, b] of want.buckets) {
      expect(got.buckets.get(key)).toMatchObject({
        ...b,
        username: `user${userIds.indexOf(Number(key.split('|')[0]))}`,
      });
    }
  });

  it('writes text as it came: quotes, backslashes, braces, commas, NULL-like words, empty strings, Unicode', async () => {
    // The rows travel as one array per column: nothing in a value may be taken for array syntax.
    const awkward = [
      '',
      'NULL',
      'null',
      '"',
      '\\',
      '{a,b}',
      'a, b',
      ' lead and trail ',
      "it's",
      '\\"{}',
      '名前 🚀',
      '\t\n',
    ];
    const r = recorder({ writer: databaseUsageWriter(store.db), now: () => (HOUR + 1) * 1000 });
    const records = awkward.map((text, i) =>
      consume(i, { content: text, tokenName: text, ip: text, requestId: `req-${i}-${text}`, other: text }),
    );
    for (const rec of records) r.recordConsume(rec);
    // And an error log, whose numbers default differently.
    r.recordError(consume(99, { content: 'upstream said "no" \\ {x}' }));
    await r.flush();
    const rows = await store.db.selectFrom('logs').selectAll().orderBy('id').execute();
    expect(rows.map((row) => [row.content, row.token_name, row.ip, row.request_id, row.other])).toEqual([
      ...awkward.map((text, i) => [text, text, text, `req-${i}-${text}`, text]),
      ['upstream said "no" \\ {x}', 'token1', '10.0.0.99', 'req-99', expect.any(String)],
    ]);
    expect(rows.at(-1)).toMatchObject({ type: LOG_TYPE.error, quota: 0, is_stream: false });
  });

  it('adds to existing hourly buckets and counters rather than replacing them', async () => {
    const r = recorder({ writer: databaseUsageWriter(store.db), now: () => (HOUR + 10) * 1000 });
    const first = Array.from({ length: 30 }, (_, i) => consume(i));
    for (const rec of first) r.recordConsume(rec);
    await r.flush();
    const second = Array.from({ length: 30 }, (_, i) => consume(i + 30));
    for (const rec of second) r.recordConsume(rec);
    await r.flush();
    expect(r.stats().flushes).toBe(2);
    const { want, got } = await expectCounters([...first, ...second], () => HOUR + 10);
    for (const [key, b] of want.buckets) expect(got.buckets.get(key)).toMatchObject(b);
  });

  it('batchOf gives the rows recordConsume would write, for a caller writing them in its own transaction', async () => {
    const queued = recorder({ writer: databaseUsageWriter(store.db), now: () => (HOUR + 10) * 1000 });
    const own = recorder({ writer: databaseUsageWriter(store.db), now: () => (HOUR + 10) * 1000 });
    const records = Array.from({ length: 6 }, (_, i) => consume(i, { clientType: 'curl' }));
    for (const rec of records.slice(0, 3)) queued.recordConsume(rec);
    await queued.flush();
    const order: string[] = [];
    for (const rec of records.slice(3)) {
      const batch = own.batchOf(rec);
      expect(batch).toMatchObject({ records: 1, logs: [{ request_id: rec.requestId, quota: rec.quota }] });
      await store.db.transaction().execute((trx) =>
        writeUsageBatch(trx, batch, async () => {
          order.push('between');
        }),
      );
    }
    expect(order).toEqual(['between', 'between', 'between']);
    expect(own.stats()).toMatchObject({ queuedRecords: 0, queuedLogs: 0, flushes: 0 });
    const { want, got } = await expectCounters(records, () => HOUR + 10);
    for (const [key, b] of want.buckets) expect(got.buckets.get(key)).toMatchObject(b);
    const logs = await store.db.selectFrom('logs').select(['request_id', 'other']).orderBy('request_id').execute();
    expect(logs.map((l) => l.request_id)).toEqual(records.map((r) => r.requestId).sort());
    const observed = await store.db
      .selectFrom('channel_observations')
      .select(sql<number>`sum(count)`.as('n'))
      .execute();
    expect(Number(observed[0]!.n)).toBe(6);
  });

  it('upserts channel observations per (channel, group, client type): counts add up, first and last seen widen', async () => {
    let clock = (HOUR + 100) * 1000;
    const statements = new Statements();
    const r = recorder({ writer: databaseUsageWriter(store.db.withPlugin(statements)), now: () => clock });
    const [a, b] = channelIds as [number, number];
    const observations = () =>
      store.db
        .selectFrom('channel_observations')
        .selectAll()
        .orderBy('channel_id')
        .orderBy('group')
        .orderBy('client_type')
        .execute();
    for (let i = 0; i < 6; i++) r.recordConsume(consume(i, { channelId: a, clientType: 'curl' }));
    r.recordConsume(consume(6, { channelId: a, clientType: 'codex', group: 'vip' }));
    r.recordConsume(consume(7, { channelId: b, clientType: 'browser', at: HOUR + 50 }));
    r.recordConsume(consume(8, { channelId: b })); // no client type: a channel test, not observed
    await r.flush();
    expect(statements.count('insert channel_observations')).toBe(1);
    expect(await observations()).toEqual([
      { channel_id: a, group: 'default', client_type: 'curl', count: 6, first_seen: HOUR + 100, last_seen: HOUR + 100 },
      { channel_id: a, group: 'vip', client_type: 'codex', count: 1, first_seen: HOUR + 100, last_seen: HOUR + 100 },
      {
        channel_id: b,
        group: 'default',
        client_type: 'browser',
        count: 1,
        first_seen: HOUR + 50,
        last_seen: HOUR + 50,
      },
    ]);

    clock = (HOUR + 200) * 1000;
    r.recordConsume(consume(9, { channelId: a, clientType: 'curl' }));
    r.recordConsume(consume(10, { channelId: a, clientType: 'curl', at: HOUR }));
    r.recordConsume(consume(11, { channelId: b, clientType: 'browser' }));
    // A channel deleted before the batch is written: its observations are dropped, the batch goes through.
    r.recordConsume(consume(12, { channelId: 2_000_000, clientType: 'curl' }));
    await r.flush();
    expect(r.stats()).toMatchObject({ failedFlushes: 0, queuedRecords: 0 });
    expect(await observations()).toEqual([
      { channel_id: a, group: 'default', client_type: 'curl', count: 8, first_seen: HOUR, last_seen: HOUR + 200 },
      { channel_id: a, group: 'vip', client_type: 'codex', count: 1, first_seen: HOUR + 100, last_seen: HOUR + 100 },
      {
        channel_id: b,
        group: 'default',
        client_type: 'browser',
        count: 2,
        first_seen: HOUR + 50,
        last_seen: HOUR + 200,
      },
    ]);
  });

  it('flushes on its own after the interval, and at once when the batch is full', async () => {
    const statements = new Statements();
    const r = recorder({
      writer: databaseUsageWriter(store.db.withPlugin(statements)),
      flushIntervalMs: 50,
      batchSize: 10,
    });
    r.recordConsume(consume(0));
    expect(r.stats().queuedRecords).toBe(1);
    await waitFor(() => r.stats().flushes === 1, 2000);
    expect(r.stats().queuedRecords).toBe(0);
    expect(await store.db.selectFrom('logs').select('request_id').execute()).toEqual([{ request_id: 'req-0' }]);

    const slow = recorder({ writer: databaseUsageWriter(store.db), flushIntervalMs: 60_000, batchSize: 10 });
    for (let i = 1; i <= 10; i++) slow.recordConsume(consume(i));
    await waitFor(() => slow.stats().flushes === 1, 2000);
    expect(await store.db.selectFrom('logs').select('id').execute()).toHaveLength(11);
  });

  it('LogConsumeEnabled=false writes no consume log but still counts; DataExportEnabled=false writes no bucket', async () => {
    const switches = { logConsumeEnabled: false, dataExportEnabled: true, errorLogEnabled: false };
    const r = recorder({
      writer: databaseUsageWriter(store.db),
      now: () => (HOUR + 1) * 1000,
      settings: {
        logConsumeEnabled: () => switches.logConsumeEnabled,
        dataExportEnabled: () => switches.dataExportEnabled,
        errorLogEnabled: () => switches.errorLogEnabled,
      },
    });
    const records = Array.from({ length: 40 }, (_, i) => consume(i));
    for (const rec of records) r.recordConsume(rec);
    await r.flush();
    expect(await store.db.selectFrom('logs').select('id').execute()).toEqual([]);
    const { want, got } = await expectCounters(records, () => HOUR + 1);
    expect(got.buckets.size).toBe(want.buckets.size);

    // Read per record: switching applies to the next request.
    switches.logConsumeEnabled = true;
    switches.dataExportEnabled = false;
    const more = Array.from({ length: 5 }, (_, i) => consume(i + 40, { at: HOUR + 7200 }));
    for (const rec of more) r.recordConsume(rec);
    await r.flush();
    expect(await store.db.selectFrom('logs').select('id').execute()).toHaveLength(5);
    expect(
      await store.db
        .selectFrom('quota_data')
        .select('id')
        .where('created_at', '=', HOUR + 7200)
        .execute(),
    ).toEqual([]);
    await expectCounters([...records, ...more], (rec) => rec.at ?? HOUR + 1);
  });

  it('writes error logs only when enabled, with no quota and no counters', async () => {
    const switches = { errorLogEnabled: false };
    const r = recorder({
      writer: databaseUsageWriter(store.db),
      settings: { ...settings(), errorLogEnabled: () => switches.errorLogEnabled },
    });
    const failure = (i: number): ErrorRecord => {
      const { quota: _q, counters: _c, ...rest } = consume(i);
      return { ...rest, content: 'upstream said 502', other: { error_code: 'bad_gateway', status_code: 502 } };
    };
    r.recordError(failure(1));
    await r.flush();
    expect(await store.db.selectFrom('logs').select('id').execute()).toEqual([]);
    switches.errorLogEnabled = true;
    r.recordError(failure(2));
    await r.flush();
    const rows = await store.db.selectFrom('logs').selectAll().execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      type: LOG_TYPE.error,
      quota: 0,
      request_id: 'req-2',
      content: 'upstream said 502',
    });
    expect(JSON.parse(rows[0]!.other)).toEqual({ error_code: 'bad_gateway', status_code: 502 });
    await expectCounters([], () => 0);
  });

  it('close() writes everything queued and refuses records afterwards', async () => {
    const r = recorder({ writer: databaseUsageWriter(store.db), now: () => (HOUR + 5) * 1000, batchSize: 10_000 });
    const records = Array.from({ length: 250 }, (_, i) => consume(i));
    for (const rec of records) r.recordConsume(rec);
    expect(r.stats().flushes).toBe(0);
    await r.close();
    expect(r.stats()).toMatchObject({ queuedLogs: 0, queuedRecords: 0 });
    expect(await store.db.selectFrom('logs').select('id').execute()).toHaveLength(250);
    await expectCounters(records, () => HOUR + 5);

    expect(() => r.recordConsume(consume(999))).toThrow(UsageRecorderClosedError);
    expect(() => r.recordConsume(consume(999))).toThrow(/usage recorder is closed.*req-999/);
    expect(() => r.recordError(consume(998))).toThrow(UsageRecorderClosedError);
    await r.close(); // idempotent
    expect(await store.db.selectFrom('logs').select('id').execute()).toHaveLength(250);
  });

  it('retries a batch that failed half-way without counting anything twice', async () => {
    const statements = new Statements();
    // The failure comes after the logs, the buckets and the user counters were sent: only the transaction
    // keeps the retry from applying them twice.
    statements.failWhen = (s) => s === 'update channels';
    const reports: boolean[] = [];
    const r = recorder({
      writer: databaseUsageWriter(store.db.withPlugin(statements)),
      now: () => (HOUR + 5) * 1000,
      onFlush: (report) => reports.push(report.ok),
    });
    const records = Array.from({ length: 120 }, (_, i) => consume(i));
    for (const rec of records.slice(0, 60)) r.recordConsume(rec);
    const flushed = r.flush();
    await waitFor(() => r.stats().failedFlushes >= 3, 5000);
    // Records keep arriving during the outage.
    for (const rec of records.slice(60)) r.recordConsume(rec);
    expect(r.stats()).toMatchObject({ queuedRecords: 120, queuedLogs: 120 });
    expect(r.stats().consecutiveFailures).toBeGreaterThanOrEqual(3);
    statements.failWhen = undefined;
    await flushed;
    await r.flush();
    expect(r.stats()).toMatchObject({ queuedRecords: 0, queuedLogs: 0, consecutiveFailures: 0, droppedLogs: 0 });
    expect(reports.filter((ok) => !ok).length).toBeGreaterThanOrEqual(3);
    expect(reports.at(-1)).toBe(true);
    expect(await store.db.selectFrom('logs').select('id').execute()).toHaveLength(120);
    const { want, got } = await expectCounters(records, () => HOUR + 5);
    for (const [key, b] of want.buckets) expect(got.buckets.get(key)).toMatchObject(b);
  });

  it('bounds memory while the database is down: uncharged log rows past the cap are dropped, counters and charged logs kept', async () => {
    let down = true;
    const real = databaseUsageWriter(store.db);
    const writer: UsageWriter = {
      async write(batch) {
        if (down) throw new Error('connect ECONNREFUSED');
        await real.write(batch);
      },
    };
    let dropped = 0;
    const r = recorder({
      writer,
      maxQueuedLogs: 100,
      batchSize: 20,
      now: () => (HOUR + 5) * 1000,
      onDrop: (n) => (dropped += n),
    });
    // Free requests (quota 0) past the cap lose their log row; charged ones never do.
    const free = Array.from({ length: 150 }, (_, i) => consume(i, { quota: 0 }));
    const charged = Array.from({ length: 100 }, (_, i) => consume(150 + i));
    for (const rec of free) {
      r.recordConsume(rec);
      expect(r.stats().queuedLogs).toBeLessThanOrEqual(100);
    }
    for (const rec of charged) r.recordConsume(rec);
    await waitFor(() => r.stats().failedFlushes >= 2, 5000);
    expect(r.stats()).toMatchObject({ queuedLogs: 200, queuedRecords: 250, droppedLogs: 50, saturated: true });
    expect(dropped).toBe(50);
    down = false;
    await r.flush();
    expect(r.stats()).toMatchObject({ queuedLogs: 0, queuedRecords: 0, saturated: false });
    const logs = await store.db.selectFrom('logs').select('request_id').orderBy('id').execute();
    expect(logs.map((l) => l.request_id)).toEqual([...free.slice(0, 100), ...charged].map((rec) => rec.requestId));
    await expectCounters([...free, ...charged], () => HOUR + 5);
  });

  it('seals a batch at maxBatchLogs: each batch carries the logs of its own requests with their counters', async () => {
    let down = true;
    const batches: UsageBatch[] = [];
    const r = recorder({
      writer: {
        async write(batch) {
          if (down) throw new Error('connect ECONNREFUSED');
          batches.push(batch);
        },
      },
      maxBatchLogs: 30,
      batchSize: 1000,
      now: () => (HOUR + 6) * 1000,
    });
    const records = Array.from({ length: 100 }, (_, i) => consume(i));
    for (const rec of records) r.recordConsume(rec);
    await waitFor(() => r.stats().failedFlushes >= 1, 5000);
    down = false;
    await r.flush();
    expect(batches.map((b) => b.logs.length)).toEqual([30, 30, 30, 10]);
    for (const batch of batches) {
      expect(batch.records).toBe(batch.logs.length);
      const logged = batch.logs.reduce((sum, row) => sum + Number(row.quota ?? 0), 0);
      expect(batch.users.reduce((sum, u) => sum + u.quota, 0)).toBe(logged);
    }
  });

  it('close() gives up after its timeout and says what was not written', async () => {
    const r = recorder({
      writer: { write: () => Promise.reject(new Error('database is down')) },
      closeTimeoutMs: 150,
    });
    for (let i = 0; i < 7; i++) r.recordConsume(consume(i));
    const started = Date.now();
    await expect(r.close()).rejects.toThrow(/7 log rows and the counters of 7 requests unwritten/);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(() => r.recordConsume(consume(8))).toThrow(UsageRecorderClosedError);
  });

  it('refuses a record the database would refuse, alone, without holding up the others', async () => {
    const r = recorder({ writer: databaseUsageWriter(store.db) });
    expect(() => r.recordConsume(consume(0, { quota: 1.5 }))).toThrow(/quota must be an integer/);
    expect(() => r.recordConsume(consume(1, { promptTokens: -1 }))).toThrow(/promptTokens/);
    expect(() => r.recordConsume(consume(2, { other: 7 as unknown as string }))).toThrow(/other/);
    expect(() => r.recordConsume(consume(3, { other: { n: 1n } }))).toThrow(TypeError);
    r.recordConsume(consume(4, { content: 'nul \u0000 inside', other: { msg: 'nul \u0000' } }));
    await r.flush();
    const rows = await store.db.selectFrom('logs').select(['request_id', 'content', 'other']).execute();
    expect(rows).toEqual([{ request_id: 'req-4', content: 'nul  inside', other: '{"msg":"nul \\u0000"}' }]);
    // Only record 4 counted: the refused ones (users 0, 1, 2, 0) added nothing.
    const users = await store.db
      .selectFrom('users')
      .select(['id', 'used_quota', 'request_count'])
      .orderBy('id')
      .execute();
    expect(users.map((u) => [u.used_quota, u.request_count])).toEqual([
      [0, 0],
      [consume(4).quota, 1],
      [0, 0],
    ]);
  });

  it.skipIf(!hasPostgres())('rides out a real Postgres outage and loses nothing', async () => {
    const admin = new pg.Client({ connectionString: inject('databaseUrl') });
    await admin.connect();
    const name = new URL(url!).pathname.slice(1);
    const r = recorder({ writer: databaseUsageWriter(store.db), now: () => (HOUR + 5) * 1000, retryMaxMs: 100 });
    try {
      await admin.query(`alter database ${name} allow_connections false`);
      await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [name]);
      const records = Array.from({ length: 300 }, (_, i) => consume(i));
      for (const rec of records.slice(0, 150)) r.recordConsume(rec);
      const flushed = r.flush();
      await waitFor(() => r.stats().failedFlushes >= 3, 10_000);
      for (const rec of records.slice(150)) r.recordConsume(rec);
      await sleep(50);
      await admin.query(`alter database ${name} allow_connections true`);
      await flushed;
      await r.flush();
      expect(r.stats()).toMatchObject({ queuedLogs: 0, queuedRecords: 0, droppedLogs: 0 });
      expect(await store.db.selectFrom('logs').select('id').execute()).toHaveLength(300);
      const { want, got } = await expectCounters(records, () => HOUR + 5);
      for (const [key, b] of want.buckets) expect(got.buckets.get(key)).toMatchObject(b);
    } finally {
      await admin.query(`alter database ${name} allow_connections true`);
      await admin.end();
    }
  });
});

describe('DataExportInterval: dashboard buckets held in memory between exports', () => {
  const MINUTE = 60_000;
  /** Settings with an export interval, DataExportEnabled switchable. */
  function exporting(intervalMs: number, switches = { dataExportEnabled: true }): UsageSettings {
    return {
      ...settings(),
      dataExportEnabled: () => switches.dataExportEnabled,
      dataExportIntervalMs: () => intervalMs,
    };
  }
  const bucketRows = () => store.db.selectFrom('quota_data').selectAll().execute();

  /** The bucket rows as the expected sums' keys and values. */
  async function expectBuckets(records: ConsumeRecord[], atOf: (r: ConsumeRecord) => number) {
    const want = expected(records, atOf).buckets;
    const got = new Map(
      (await bucketRows()).map((b) => [
        `${b.user_id}|${b.model_name}|${b.created_at}`,
        { quota: b.quota, count: b.count, token_used: b.token_used },
      ]),
    );
    expect(got).toEqual(want);
  }

  it('writes counters and logs with every flush, buckets only once the interval has passed, added up exactly', async () => {
    const statements = new Statements();
    let clock = (HOUR + 60) * 1000;
    const r = recorder({
      writer: databaseUsageWriter(store.db.withPlugin(statements)),
      settings: exporting(5 * MINUTE),
      now: () => clock,
      batchSize: 10,
    });
    const records: ConsumeRecord[] = [];
    // Three flushes' worth of requests within the five minutes, a minute apart.
    for (let flush = 0; flush < 3; flush++) {
      for (let i = 0; i < 10; i++) {
        const rec = consume(flush * 10 + i, { at: Math.floor(clock / 1000) });
        records.push(rec);
        r.recordConsume(rec);
      }
      await waitFor(() => r.stats().flushes === flush + 1, 2000);
      clock += MINUTE;
    }
    expect(await store.db.selectFrom('logs').select('id').execute()).toHaveLength(30);
    const at = (rec: ConsumeRecord) => rec.at!;
    await expectCounters(records, at);
    expect(await bucketRows()).toEqual([]);
    expect(statements.count('insert quota_data')).toBe(0);

    // Five minutes after the first held bucket: the next flush writes all of them, one row per bucket.
    clock = (HOUR + 60) * 1000 + 5 * MINUTE;
    for (let i = 30; i < 40; i++) {
      const rec = consume(i, { at: Math.floor(clock / 1000) });
      records.push(rec);
      r.recordConsume(rec);
    }
    await waitFor(() => r.stats().flushes === 4, 2000);
    expect(statements.count('insert quota_data')).toBe(1);
    await expectBuckets(records, at);
    await expectCounters(records, at);
  });

  it('writes held buckets when they are due although no request comes by', async () => {
    const r = recorder({ writer: databaseUsageWriter(store.db), settings: exporting(20), batchSize: 6 });
    const records = Array.from({ length: 6 }, (_, i) => consume(i, { at: HOUR + 5 }));
    for (const rec of records) r.recordConsume(rec);
    await waitFor(() => r.stats().flushes >= 2, 5000);
    await expectBuckets(records, () => HOUR + 5);
  });

  it('close() writes the held buckets (graceful shutdown)', async () => {
    const r = recorder({ writer: databaseUsageWriter(store.db), settings: exporting(60 * MINUTE), batchSize: 4 });
    const records = Array.from({ length: 8 }, (_, i) => consume(i, { at: HOUR + 5 }));
    for (const rec of records) r.recordConsume(rec);
    await waitFor(() => r.stats().flushes === 2, 2000);
    expect(await bucketRows()).toEqual([]);
    await r.close();
    await expectBuckets(records, () => HOUR + 5);
    await expectCounters(records, () => HOUR + 5);
  });

  it('a held batch that fails is retried whole: buckets neither lost nor counted twice', async () => {
    const statements = new Statements();
    const r = recorder({
      writer: databaseUsageWriter(store.db.withPlugin(statements)),
      settings: exporting(60 * MINUTE),
    });
    const records = Array.from({ length: 9 }, (_, i) => consume(i, { at: HOUR + 5 }));
    for (const rec of records) r.recordConsume(rec);
    let failures = 2;
    statements.failWhen = (statement) => statement === 'insert quota_data' && failures-- > 0;
    await r.flush();
    expect(r.stats().failedFlushes).toBe(2);
    await expectBuckets(records, () => HOUR + 5);
    await expectCounters(records, () => HOUR + 5);
  });

  it('DataExportEnabled off: no bucket rows, not even on shutdown; the counters as ever', async () => {
    const r = recorder({
      writer: databaseUsageWriter(store.db),
      settings: exporting(20, { dataExportEnabled: false }),
    });
    const records = Array.from({ length: 6 }, (_, i) => consume(i, { at: HOUR + 5 }));
    for (const rec of records) r.recordConsume(rec);
    await r.close();
    expect(await bucketRows()).toEqual([]);
    await expectCounters(records, () => HOUR + 5);
  });
});
