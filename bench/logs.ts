/**
 * Usage-log listing benchmark (issue 4, "must hold"): one page of 100 logs, with its total, out of
 * 1,000,000 rows, by every filter of the log screen, on the embedded database (PGlite) and on Postgres.
 *
 *   npm run bench:logs                      # 1,000,000 rows on both
 *   BENCH_LOG_ROWS=200000 npm run bench:logs
 *   BENCH_LOG_BACKENDS=pglite npm run bench:logs
 *
 * Postgres: TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/postgres; a scratch database is
 * created and dropped. It measures the domain service the routes call (LogService.list), not HTTP.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import { createMemoryClusterState } from '../gateway/src/cluster/index.ts';
import { type Actor, type LogFilters, LogMaintenance, LogService } from '../gateway/src/domain/logs/index.ts';
import { OptionsService } from '../gateway/src/domain/options/index.ts';
import type { Database } from '../gateway/src/store/database.ts';
import { migrateToLatest, openStore, type Store } from '../gateway/src/store/index.ts';

const ROWS = Number(process.env.BENCH_LOG_ROWS ?? 1_000_000);
const BACKENDS = (process.env.BENCH_LOG_BACKENDS ?? 'pglite,postgres').split(',').map((b) => b.trim());
const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const GOAL_MS = 200;
const WARMUP = 3;
const RUNS = 20;
const PAGE = 100;
const SPAN_SECONDS = 30 * 86_400;
const now = Math.floor(Date.now() / 1000);
/** Page 1,001 of 100 on a million rows. */
const DEEP_OFFSET = Math.floor(ROWS / 10);

const admin: Actor = { id: 1, role: 100 };

interface Scenario {
  name: string;
  filters: LogFilters;
  actor?: Actor;
  offset?: number;
  /** Shown for information; the goal applies to the filters of the log screen. */
  informational?: boolean;
}

/**
 * The data (see `insertLogs`) is skewed on purpose, and each filter asks for its most common value,
 * which is the expensive case: user1 makes 10% of requests, model gpt-4o-mini 25%, channel 1 30%,
 * consume logs are 90%, group default 70%.
 */
const scenarios: Scenario[] = [
  { name: 'no filter', filters: {} },
  { name: 'user (username=user1, 10%)', filters: { username: 'user1' } },
  { name: 'user, own logs (/log/self)', filters: {}, actor: { id: 1, role: 1 } },
  { name: 'token name (2%)', filters: { token_name: 'token-1-0' } },
  { name: 'model (gpt-4o-mini, 25%)', filters: { model_name: 'gpt-4o-mini' } },
  { name: 'channel (1, 30%)', filters: { channel: 1 } },
  { name: 'type (consume, 90%)', filters: { type: 2 } },
  { name: 'group (default, 70%)', filters: { group: 'default' } },
  { name: 'time range (last 24 h)', filters: { start_timestamp: now - 86_400, end_timestamp: now } },
  {
    name: 'user+model+type+7 days',
    filters: { username: 'user1', model_name: 'gpt-4o-mini', type: 2, start_timestamp: now - 7 * 86_400 },
  },
  { name: 'type+group+channel', filters: { type: 2, group: 'svip', channel: 5 } },
  {
    name: `deep page (offset ${DEEP_OFFSET.toLocaleString('en')})`,
    filters: {},
    offset: DEEP_OFFSET,
    informational: true,
  },
];

/** Rows ids from..to (inclusive), spread evenly over the last 30 days, in one INSERT … SELECT. */
async function insertLogs(db: Kysely<Database>, from: number, to: number): Promise<void> {
  await sql`
    insert into logs (user_id, created_at, type, content, username, token_name, model_name, quota,
      prompt_tokens, completion_tokens, use_time, is_stream, channel_id, channel_name, token_id, "group",
      ip, request_id, other)
    select u, ${now} - ((${ROWS}::bigint - g) * ${SPAN_SECONDS} / ${ROWS}), ty, '', 'user' || u,
      'token-' || u || '-' || k, m, g % 5000, g % 3000, g % 700, g % 30, g % 2 = 0, ch, 'channel-' || ch,
      u * 5 + k, grp, '', md5(g::text),
      '{"model_ratio":1.25,"group_ratio":1,"completion_ratio":4,"frt":' || (g % 2000) ||
        ',"admin_info":{"use_channel":["' || ch || '"]}}'
    from (
      select g,
        case when g % 10 = 0 then 1 else 2 + (g * 31 % 199) end as u,
        (g / 10 * 13) % 5 as k,
        case when g % 4 = 0 then 'gpt-4o-mini' else 'model-' || (g * 7 % 39) end as m,
        case when g % 10 < 3 then 1 else 2 + (g * 11 % 19) end as ch,
        case when g % 100 < 90 then 2 when g % 100 < 95 then 5 when g % 100 < 97 then 1
             when g % 100 < 99 then 3 else 4 end as ty,
        case when g % 10 < 7 then 'default' when g % 10 < 9 then 'vip' else 'svip' end as grp
      from generate_series(${from}::bigint, ${to}::bigint) g
    ) x`.execute(db);
}

interface Result {
  backend: string;
  scenario: Scenario;
  total: number;
  estimated: boolean;
  p50: number;
  max: number;
}

async function benchStore(backend: string, store: Store): Promise<Result[]> {
  await migrateToLatest(store.db);
  const cluster = createMemoryClusterState({ namespace: `bench-${backend}` });
  const options = await OptionsService.start({ db: store.db, bus: cluster.bus, syncIntervalMs: 3_600_000 });
  try {
    const started = performance.now();
    const chunk = 100_000;
    for (let from = 1; from <= ROWS; from += chunk) {
      const to = Math.min(ROWS, from + chunk - 1);
      await insertLogs(store.db, from, to);
      if (process.stdout.isTTY) process.stdout.write(`\r[${backend}] inserted ${to.toLocaleString('en')} rows`);
    }
    if (process.stdout.isTTY) process.stdout.write('\n');
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.log(`[${backend}] inserted ${ROWS.toLocaleString('en')} rows in ${seconds} s`);

    const logs = new LogService({ db: store.db, options });
    if (store.kind === 'pglite') {
      // The embedded database has no autovacuum: the hourly log job vacuums and analyzes the table.
      const maintenance = new LogMaintenance({ db: store.db, logs, options, vacuum: true });
      const t = performance.now();
      await maintenance.run();
      console.log(`[${backend}] hourly log maintenance (vacuum, analyze): ${Math.round(performance.now() - t)} ms`);
    } else {
      // What autovacuum does on its own after a bulk load; done here so the run does not wait for it.
      await sql`vacuum (analyze) logs`.execute(store.db);
      console.log(`[${backend}] vacuum (analyze) logs, as autovacuum would`);
    }

    const results: Result[] = [];
    for (const scenario of scenarios) {
      const params = { filters: scenario.filters, offset: scenario.offset ?? 0, limit: PAGE };
      const actor = scenario.actor ?? admin;
      const times: number[] = [];
      let last = await logs.list(params, actor);
      for (let i = 0; i < WARMUP + RUNS; i++) {
        const t = performance.now();
        last = await logs.list(params, actor);
        if (i >= WARMUP) times.push(performance.now() - t);
      }
      if (last.items.length === 0) throw new Error(`${scenario.name}: no rows; the data generator is off`);
      times.sort((a, b) => a - b);
      results.push({
        backend,
        scenario,
        total: last.total,
        estimated: last.totalEstimated,
        p50: times[Math.floor(times.length / 2)]!,
        max: times[times.length - 1]!,
      });
    }
    const t = performance.now();
    const stat = await logs.stat({}, admin);
    console.log(
      `[${backend}] for information: stat over every row (quota ${stat.quota.toLocaleString('en')}) took ${Math.round(performance.now() - t)} ms`,
    );
    return results;
  } finally {
    await options.close();
    await cluster.close();
  }
}

async function onPGlite(): Promise<Result[]> {
  const dir = await mkdtemp(path.join(tmpdir(), 'tollgate-bench-logs-'));
  const store = await openStore({ dataDir: dir });
  try {
    return await benchStore('pglite', store);
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}

async function onPostgres(): Promise<Result[]> {
  const name = `tollgate_bench_logs_${process.pid}`;
  const adminClient = new pg.Client({ connectionString: ADMIN_URL });
  try {
    await adminClient.connect();
  } catch (error) {
    console.log(`[postgres] skipped: nothing answers at ${redact(ADMIN_URL)} (${(error as Error).message})`);
    return [];
  }
  await adminClient.query(`create database ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const store = await openStore({ databaseUrl: url.toString(), poolMax: 4 });
  try {
    const version = await sql<{ v: string }>`select current_setting('server_version') as v`.execute(store.db);
    console.log(`[postgres] ${redact(ADMIN_URL)}, server ${version.rows[0]?.v}, scratch database ${name}`);
    return await benchStore('postgres', store);
  } finally {
    await store.close();
    await adminClient.query(`drop database if exists ${name} with (force)`);
    await adminClient.end();
  }
}

function redact(text: string): string {
  const url = new URL(text);
  if (url.password) url.password = '***';
  return url.toString();
}

function printTable(results: Result[]): void {
  const head = ['backend', 'filter', 'matching rows', 'p50 ms', 'max ms', `< ${GOAL_MS} ms`];
  const rows = results.map((r) => [
    r.backend,
    r.scenario.name,
    `${r.estimated ? '~' : ''}${r.total.toLocaleString('en')}`,
    r.p50.toFixed(1),
    r.max.toFixed(1),
    r.scenario.informational ? `(${r.max < GOAL_MS ? 'yes' : 'no'}, info)` : r.max < GOAL_MS ? 'yes' : 'NO',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(`\nListing a page of ${PAGE} (with total) out of ${ROWS.toLocaleString('en')} logs; ${RUNS} runs each`);
  console.log(line(head));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const row of rows) console.log(line(row));
  console.log('~ = estimated total (more than 100,000 matches; exact below)');
}

const all: Result[] = [];
if (BACKENDS.includes('pglite')) all.push(...(await onPGlite()));
if (BACKENDS.includes('postgres')) all.push(...(await onPostgres()));
printTable(all);
const missed = all.filter((r) => !r.scenario.informational && r.max >= GOAL_MS);
console.log(
  missed.length === 0
    ? `Every filter answered within ${GOAL_MS} ms.`
    : `Over ${GOAL_MS} ms: ${missed.map((r) => `${r.backend} ${r.scenario.name}`).join(', ')}`,
);
