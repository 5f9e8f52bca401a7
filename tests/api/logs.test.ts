import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogMaintenance, LogService } from '../../gateway/src/domain/logs/index.ts';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { addQuotaData } from '../../gateway/src/store/repositories/quota-data.ts';
import { clientsFrom, type DashboardClient, refusalOf, setupRoot } from '../support/client.ts';
import { parseCsv } from '../support/csv.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';

let gateway: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;
let alice: DashboardClient;
let bob: DashboardClient;
const { client, user } = clientsFrom(() => gateway.url, '10.3.0');
const db = () => gateway.store.db;

/** A token name that needs every kind of CSV escaping. */
const TRICKY = 'a, "quoted"\nname';
const T0 = 1_700_000_000;
const CAROL_ID = 9999;

interface Seed {
  id: number;
  user_id: number;
  username: string;
  created_at: number;
  type: number;
  token_name: string;
  model_name: string;
  channel_id: number;
  group: string;
  quota: number;
  prompt_tokens: number;
  completion_tokens: number;
  content: string;
  other: string;
}
let seeds: Seed[] = [];
let seededAt = 0;

const newestFirst = (a: Seed, b: Seed) => b.created_at - a.created_at || b.id - a.id;

interface Filter {
  type?: number;
  username?: string;
  token_name?: string;
  model_name?: string;
  start_timestamp?: number;
  end_timestamp?: number;
  channel?: number;
  group?: string;
}

/** The expected rows, computed here from the seeds, independently of the gateway's SQL. */
function expected(f: Filter, ownerId?: number): Seed[] {
  return seeds
    .filter(
      (s) =>
        (ownerId === undefined || s.user_id === ownerId) &&
        (!f.type || s.type === f.type) &&
        (ownerId !== undefined || !f.username || s.username === f.username) &&
        (!f.token_name || s.token_name === f.token_name) &&
        (!f.model_name ||
          (f.model_name.endsWith('%')
            ? s.model_name.startsWith(f.model_name.slice(0, -1))
            : s.model_name === f.model_name)) &&
        (!f.start_timestamp || s.created_at >= f.start_timestamp) &&
        (!f.end_timestamp || s.created_at <= f.end_timestamp) &&
        (ownerId !== undefined || !f.channel || s.channel_id === f.channel) &&
        (!f.group || s.group === f.group),
    )
    .sort(newestFirst);
}

const qs = (params: object) =>
  new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)])).toString();

beforeAll(async () => {
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(
    gatewayEnv(database.options, testNamespace(), { TRUST_PROXY: 'true', GLOBAL_API_RATE_LIMIT: '100000' }),
  );
  root = await setupRoot(gateway.url);
  alice = await user('alice');
  bob = await user('bob');
  await db()
    .insertInto('channels')
    .values({ id: 7, type: 1, name: 'Live seven', key_encrypted: 'x', created_time: T0 })
    .execute();

  const owners = [
    { id: alice.userId!, name: 'alice' },
    { id: bob.userId!, name: 'bob' },
    { id: CAROL_ID, name: 'carol' },
  ];
  const rows = Array.from({ length: 90 }, (_, i) => {
    const owner = owners[i % 3]!;
    const channel = [7, 8, 0][Math.floor(i / 3) % 3]!;
    return {
      user_id: owner.id,
      username: owner.name,
      created_at: T0 + Math.floor(i / 2) * 60, // pairs share a second: ties are broken by id
      type: [2, 2, 5, 1, 3][i % 5]!,
      token_name: ['default', 'work', 'batch', TRICKY][i % 4]!,
      model_name: ['gpt-4o', 'claude-3', 'gemini-pro', 'gpt-4o-mini'][Math.floor(i / 4) % 4]!,
      channel_id: channel,
      channel_name: channel ? `stored-name-${channel}` : '',
      group: ['default', 'vip'][Math.floor(i / 2) % 2]!,
      quota: (i + 1) * 1000,
      prompt_tokens: 10 + i,
      completion_tokens: 20 + 2 * i,
      use_time: i % 10,
      is_stream: i % 2 === 0,
      token_id: i % 4,
      ip: `10.0.0.${i}`,
      request_id: `req-${i}`,
      content: i === 4 ? '=cmd|"/C calc"!A0' : `note ${i}`,
      other: JSON.stringify({
        model_ratio: 1.5,
        frt: 300 + i,
        admin_info: { use_channel: [String(channel)] },
        stream_status: { status: 'ok' },
      }),
    };
  });
  // Recent consumption for rpm/tpm: four consume logs and one error in the last minute, one consume log
  // ten minutes ago.
  seededAt = Math.floor(Date.now() / 1000);
  const recent = (type: number, ago: number, owner: { id: number; name: string }, model = 'gpt-4o') => ({
    ...rows[0]!,
    user_id: owner.id,
    username: owner.name,
    type,
    model_name: model,
    created_at: seededAt - ago,
    quota: 7,
    prompt_tokens: 100,
    completion_tokens: 11,
  });
  rows.push(
    recent(2, 5, owners[0]!),
    recent(2, 6, owners[0]!, 'claude-3'),
    recent(2, 7, owners[1]!),
    recent(2, 8, owners[2]!),
    recent(5, 5, owners[0]!),
    recent(2, 600, owners[0]!),
  );
  const inserted = await db().insertInto('logs').values(rows).returning('id').execute();
  seeds = rows.map((r, i) => ({ ...r, id: inserted[i]!.id }));
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
});

const ids = (items: Array<{ id: number }>) => items.map((i) => i.id);

describe('GET /api/log/ (administrators)', () => {
  const filters: Filter[] = [
    {},
    { type: 0 },
    { type: 2 },
    { type: 5 },
    { username: 'bob' },
    { token_name: 'work' },
    { token_name: TRICKY },
    { model_name: 'gpt-4o' },
    { model_name: 'gpt-4o%' },
    { start_timestamp: T0 + 1200 },
    { end_timestamp: T0 + 600 },
    { channel: 7 },
    { group: 'vip' },
    { username: 'alice', model_name: 'claude-3', type: 2 },
    { channel: 8, group: 'default', start_timestamp: T0 + 300, end_timestamp: T0 + 1800 },
    { username: 'carol', token_name: 'default', type: 5 },
    { username: 'nobody' },
  ];
  it.each(filters)('filters by %j, newest first, with an exact total', async (filter) => {
    const answer = await root.get(`/api/log/?${qs({ ...filter, page_size: 100 })}`);
    expect(answer.status).toBe(200);
    const want = expected(filter);
    expect(answer.body.data).toMatchObject({ total: want.length, page: 1, page_size: 100, total_estimated: false });
    expect(ids(answer.body.data.items)).toEqual(ids(want.slice(0, 100)));
  });

  it('shows every column, the full other, and current channel names', async () => {
    const answer = await root.get(`/api/log/?${qs({ page_size: 100 })}`);
    const byId = new Map(answer.body.data.items.map((i: any) => [i.id, i]));
    const seven = seeds.find((s) => s.channel_id === 7)!;
    expect(byId.get(seven.id)).toMatchObject({
      channel: 7,
      channel_name: 'Live seven',
      username: seven.username,
      user_id: seven.user_id,
      other: seven.other,
    });
    expect(JSON.parse((byId.get(seven.id) as any).other).admin_info).toEqual({ use_channel: ['7'] });
    const eight = seeds.find((s) => s.channel_id === 8)!;
    expect(byId.get(eight.id)).toMatchObject({ channel: 8, channel_name: 'stored-name-8' });
  });

  it('pages: p and page_size, at most 100 per page, p below 1 reads as 1', async () => {
    const all = expected({});
    const third = await root.get('/api/log/?p=3&page_size=7');
    expect(third.body.data).toMatchObject({ page: 3, page_size: 7, total: all.length });
    expect(ids(third.body.data.items)).toEqual(ids(all.slice(14, 21)));
    const big = await root.get('/api/log/?page_size=1000');
    expect(big.body.data.page_size).toBe(100);
    expect(big.body.data.items).toHaveLength(Math.min(100, all.length));
    const zero = await root.get('/api/log/?p=0&page_size=5');
    expect(ids(zero.body.data.items)).toEqual(ids(all.slice(0, 5)));
    const beyond = await root.get('/api/log/?p=99&page_size=100');
    expect(beyond.body.data).toMatchObject({ items: [], total: all.length });
  });

  it('reads empty parameters as no filter and refuses malformed ones', async () => {
    const empty = await root.get('/api/log/?channel=&start_timestamp=&type=&username=&page_size=100');
    expect(empty.body.data.total).toBe(seeds.length);
    for (const bad of ['type=abc', 'channel=-1', 'start_timestamp=1.5', `username=${'x'.repeat(65)}`]) {
      const answer = await root.get(`/api/log/?${bad}`);
      expect(answer.status, bad).toBe(200);
      expect(answer.body).toMatchObject({ success: false, code: 'INVALID_REQUEST' });
    }
  });

  it('is for administrators only', async () => {
    const answer = await alice.get('/api/log/');
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ success: false, code: 'FORBIDDEN' });
    expect((await client().get('/api/log/')).status).toBe(401);
  });
});

describe('GET /api/log/self/ (users)', () => {
  const filters: Filter[] = [
    {},
    { type: 2 },
    { token_name: 'work' },
    { model_name: 'gemini-pro' },
    { start_timestamp: T0 + 900, end_timestamp: T0 + 2000 },
    { group: 'default', type: 1 },
    // Administrator-only filters are ignored: a user cannot reach another user's rows through them.
    { username: 'bob' },
    { channel: 7 },
    { username: 'carol', channel: 8, model_name: 'gpt-4o' },
  ];
  it.each(filters)('shows only the user own rows for %j', async (filter) => {
    for (const url of ['/api/log/self/', '/api/log/self']) {
      const answer = await alice.get(`${url}?${qs({ ...filter, page_size: 100 })}`);
      const want = expected(filter, alice.userId);
      expect(answer.body.data.total).toBe(want.length);
      expect(ids(answer.body.data.items)).toEqual(ids(want));
      for (const item of answer.body.data.items) expect(item.user_id).toBe(alice.userId);
    }
  });

  it('strips admin_info, stream_status and the channel from what a user sees', async () => {
    const answer = await alice.get('/api/log/self/?page_size=100');
    expect(answer.body.data.items.length).toBeGreaterThan(0);
    for (const item of answer.body.data.items) {
      expect(item).not.toHaveProperty('channel');
      expect(item).not.toHaveProperty('channel_name');
      const other = JSON.parse(item.other);
      expect(other).not.toHaveProperty('admin_info');
      expect(other).not.toHaveProperty('stream_status');
      expect(other).toMatchObject({ model_ratio: 1.5 });
      expect(JSON.stringify(item)).not.toContain('use_channel');
    }
  });

  it('needs a signed-in user', async () => {
    expect((await client().get('/api/log/self/')).body).toMatchObject({ success: false, code: 'NOT_LOGGED_IN' });
  });
});

describe('GET /api/log/stat and /api/log/self/stat', () => {
  /** Stats computed here: consume logs only, rpm/tpm over the last 60 s ignoring the time filters. */
  function stat(filter: Filter, ownerId?: number) {
    const consume = expected({ ...filter, type: 2 }, ownerId);
    const recent = expected({ ...filter, type: 2, start_timestamp: seededAt - 50, end_timestamp: 0 }, ownerId);
    const tokens = (rows: Seed[]) => rows.reduce((sum, r) => sum + r.prompt_tokens + r.completion_tokens, 0);
    return {
      quota: consume.reduce((sum, r) => sum + r.quota, 0),
      token: tokens(consume),
      rpm: recent.length,
      tpm: tokens(recent),
    };
  }

  it.each([
    {},
    { username: 'alice' },
    { model_name: 'gpt-4o' },
    { type: 5 },
    { start_timestamp: T0 + 600, end_timestamp: T0 + 1500 },
    { channel: 7, group: 'vip' },
  ] as Filter[])('administrators: %j', async (filter) => {
    const answer = await root.get(`/api/log/stat?${qs(filter)}`);
    expect(answer.body).toEqual({ success: true, message: '', data: stat(filter) });
    expect(answer.body.data.rpm).toBeGreaterThanOrEqual(0);
  });

  it('counts recent requests in rpm/tpm', () => {
    expect(stat({})).toMatchObject({ rpm: 4, tpm: 4 * 111 });
    expect(stat({}, alice.userId)).toMatchObject({ rpm: 2, tpm: 2 * 111 });
  });

  it.each([{}, { model_name: 'claude-3' }, { username: 'bob' }, { channel: 8 }] as Filter[])(
    'users get their own numbers only: %j',
    async (filter) => {
      const answer = await alice.get(`/api/log/self/stat?${qs(filter)}`);
      expect(answer.body.data).toEqual(stat(filter, alice.userId));
    },
  );

  it('refuses the administrator stat to users', async () => {
    expect(refusalOf(await bob.get('/api/log/stat'))).toMatchObject({ status: 200, success: false });
  });
});

describe('CSV export', () => {
  const exportOf = async (c: DashboardClient, path: string) => {
    const response = await fetch(`${gateway.url}${path}`, {
      headers: { cookie: c.cookie, 'new-api-user': String(c.userId) },
    });
    // ignoreBOM keeps the byte-order mark in the text, so the test sees it.
    return { response, text: new TextDecoder('utf-8', { ignoreBOM: true }).decode(await response.arrayBuffer()) };
  };

  it('exports what the list shows, with a header, escaping and the cost in USD', async () => {
    const filter = { group: 'vip', type: 2 };
    const { response, text } = await exportOf(root, `/api/log/export?${qs(filter)}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(response.headers.get('content-disposition')).toMatch(/^attachment; filename="logs-\d{8}-\d{6}\.csv"$/);
    expect(text.startsWith('\uFEFFid,time,created_at,type,type_name,username,')).toBe(true);
    const [header, ...rows] = parseCsv(text.slice(1));
    expect(header).toEqual([
      'id',
      'time',
      'created_at',
      'type',
      'type_name',
      'username',
      'token_name',
      'model_name',
      'group',
      'user_id',
      'channel',
      'channel_name',
      'prompt_tokens',
      'completion_tokens',
      'quota',
      'cost_usd',
      'use_time',
      'is_stream',
      'ip',
      'request_id',
      'content',
      'other',
    ]);
    const want = expected(filter);
    expect(rows).toHaveLength(want.length);
    const col = (name: string) => header!.indexOf(name);
    rows.forEach((row, i) => {
      const seed = want[i]!;
      expect(row).toHaveLength(header!.length);
      expect(Number(row[col('id')])).toBe(seed.id);
      expect(row[col('token_name')]).toBe(seed.token_name);
      expect(row[col('other')]).toBe(seed.other);
      expect(row[col('time')]).toBe(new Date(seed.created_at * 1000).toISOString().replace('.000Z', 'Z'));
      expect(row[col('cost_usd')]).toBe((seed.quota / 500000).toFixed(6));
      expect(row[col('type_name')]).toBe('consume');
    });
    // The tricky token name really went through quoting: commas, doubled quotes and a line break.
    expect(text).toContain('"a, ""quoted""\nname"');
  });

  it('defuses spreadsheet formulas in text cells', async () => {
    const formula = seeds.find((s) => s.content.startsWith('='))!;
    const { text } = await exportOf(root, `/api/log/export?${qs({ type: formula.type })}`);
    expect(text).toContain(`"'=cmd|""/C calc""!A0"`);
  });

  it('gives users their own rows only, without channels or admin details', async () => {
    const { response, text } = await exportOf(alice, `/api/log/self/export?${qs({ username: 'bob', channel: 7 })}`);
    expect(response.status).toBe(200);
    const [header, ...rows] = parseCsv(text.slice(1));
    expect(header).not.toContain('channel');
    expect(header).not.toContain('channel_name');
    expect(rows).toHaveLength(expected({}, alice.userId).length);
    const usernameColumn = header!.indexOf('username');
    for (const row of rows) expect(row[usernameColumn]).toBe('alice');
    expect(text).not.toContain('admin_info');
    expect(text).not.toContain('stream_status');
  });

  it('refuses the administrator export to users', async () => {
    expect(refusalOf(await alice.get('/api/log/export'))).toMatchObject({ status: 200, success: false });
  });

  it('streams a 20,000-row export, every row once, newest first', async () => {
    await sql`insert into logs (user_id, username, created_at, type, model_name, quota, token_name)
      select 1, 'bulk', ${T0 - 100_000} + g / 3, 2, 'bulk-model', g, 'tok-' || g
      from generate_series(1, 20000) g`.execute(db());
    try {
      const { response, text } = await exportOf(root, '/api/log/export?username=bulk');
      expect(response.headers.get('content-length')).toBeNull();
      expect(response.headers.get('transfer-encoding')).toBe('chunked');
      const [, ...rows] = parseCsv(text.slice(1));
      expect(rows).toHaveLength(20_000);
      const seen = new Set(rows.map((r) => r[0]));
      expect(seen.size).toBe(20_000);
      const times = rows.map((r) => Number(r[2]));
      const idsInOrder = rows.map((r) => Number(r[0]));
      for (let i = 1; i < rows.length; i++) {
        const ordered = times[i - 1]! > times[i]! || (times[i - 1] === times[i] && idsInOrder[i - 1]! > idsInOrder[i]!);
        if (!ordered) throw new Error(`row ${i} is out of order`);
      }
      expect(new Set(rows.map((r) => r[7]))).toEqual(new Set(['bulk-model']));
    } finally {
      await db().deleteFrom('logs').where('username', '=', 'bulk').execute();
    }
  });
});

describe('DELETE /api/log/?target_timestamp=', () => {
  it('deletes exactly the logs created before the target and answers the count', async () => {
    await db()
      .insertInto('logs')
      .values(
        Array.from({ length: 10 }, (_, i) => ({
          user_id: CAROL_ID,
          created_at: 1000 + i,
          type: 4,
          model_name: 'ancient',
        })),
      )
      .execute();
    const before = await root.delete('/api/log/?target_timestamp=1005');
    expect(before.body).toEqual({ success: true, message: '', data: 5 });
    const left = await db().selectFrom('logs').select('created_at').where('model_name', '=', 'ancient').execute();
    expect(left.map((r) => r.created_at).sort()).toEqual([1005, 1006, 1007, 1008, 1009]);
    expect((await root.get('/api/log/?page_size=1')).body.data.total).toBe(seeds.length + 5);
    expect((await root.delete('/api/log/?target_timestamp=1010')).body.data).toBe(5);
    expect((await root.get('/api/log/?page_size=1')).body.data.total).toBe(seeds.length);
  });

  it('works in batches of the configured size', async () => {
    await db()
      .insertInto('logs')
      .values(Array.from({ length: 10 }, (_, i) => ({ user_id: CAROL_ID, created_at: 2000 + i, type: 4 })))
      .execute();
    const logs = new LogService({ db: db(), options: gateway.options, deleteBatchSize: 3 });
    expect(await logs.deleteBefore(2010)).toBe(10);
    expect(await logs.deleteBefore(2010)).toBe(0);
  });

  it('needs a target and an administrator', async () => {
    const missing = await root.delete('/api/log/');
    expect(missing.status).toBe(200);
    expect(missing.body).toMatchObject({ success: false, code: 'TARGET_TIMESTAMP_REQUIRED' });
    expect(refusalOf(await alice.delete(`/api/log/?target_timestamp=${T0 * 2}`))).toMatchObject({
      status: 200,
      success: false,
    });
    expect((await root.get('/api/log/?page_size=1')).body.data.total).toBe(seeds.length);
  });
});

describe('log retention', () => {
  const DAY = 86_400;
  const now = 1_000_000_000;
  const maintenance = () =>
    new LogMaintenance({
      db: db(),
      logs: new LogService({ db: db(), options: gateway.options, deleteBatchSize: 2 }),
      options: gateway.options,
      vacuum: gateway.store.kind === 'pglite',
    });
  const retained = async () =>
    (await db().selectFrom('logs').select('created_at').where('model_name', '=', 'retention').execute())
      .map((r) => r.created_at)
      .sort();

  it('deletes exactly the logs older than LogRetentionDays, and nothing when it is 0', async () => {
    const times = [now - 40 * DAY, now - 30 * DAY - 1, now - 30 * DAY, now - 30 * DAY + 1, now - DAY];
    await db()
      .insertInto('logs')
      .values(times.map((created_at) => ({ user_id: CAROL_ID, created_at, type: 2, model_name: 'retention' })))
      .execute();
    try {
      await gateway.options.set('LogRetentionDays', '0');
      expect(await maintenance().run(undefined, now * 1000)).toEqual({ deleted: 0 });
      expect(await retained()).toEqual(times);

      await gateway.options.set('LogRetentionDays', '30');
      expect(await maintenance().run(undefined, now * 1000)).toEqual({ deleted: 2 });
      expect(await retained()).toEqual(times.slice(2));
      // Everything newer (the seeded logs of 2023 and the recent ones) stays.
      expect((await root.get('/api/log/?page_size=1')).body.data.total).toBe(seeds.length + 3);
    } finally {
      await gateway.options.set('LogRetentionDays', '0');
      await db().deleteFrom('logs').where('model_name', '=', 'retention').execute();
    }
  });

  it('stops between batches when its lease is lost', async () => {
    await gateway.options.set('LogRetentionDays', '1');
    await db()
      .insertInto('logs')
      .values([1, 2, 3].map((i) => ({ user_id: CAROL_ID, created_at: i, type: 2, model_name: 'retention' })))
      .execute();
    try {
      const aborted = AbortSignal.abort();
      expect(await maintenance().run(aborted, now * 1000)).toEqual({ deleted: 0 });
      expect(await retained()).toEqual([1, 2, 3]);
    } finally {
      await gateway.options.set('LogRetentionDays', '0');
      await db().deleteFrom('logs').where('model_name', '=', 'retention').execute();
    }
  });
});

describe('the generic list (for /rest)', () => {
  const service = () => new LogService({ db: db(), options: gateway.options });
  const admin = () => ({ id: 1, role: 100 });

  it('sorts by a whitelisted field and pages with offset/limit', async () => {
    const result = await service().list(
      { filters: { type: 2 }, sort: { field: 'quota', order: 'ASC' }, offset: 2, limit: 5 },
      admin(),
    );
    // Ties keep time order, then id.
    const want = expected({ type: 2 }).sort((a, b) => a.quota - b.quota || a.created_at - b.created_at || a.id - b.id);
    expect(result.total).toBe(want.length);
    expect(ids(result.items)).toEqual(ids(want.slice(2, 7)));
  });

  it('refuses other sort fields', async () => {
    await expect(
      service().list({ filters: {}, sort: { field: 'content', order: 'asc' }, offset: 0, limit: 5 }, admin()),
    ).rejects.toMatchObject({ code: 'SORT_FIELD_UNSUPPORTED' });
  });

  it('filters by ids and keeps users to their own rows', async () => {
    const bobs = seeds.filter((s) => s.user_id === bob.userId).slice(0, 3);
    const asAlice = { id: alice.userId!, role: 1 };
    const mine = await service().list({ filters: { id: bobs.map((s) => s.id) }, offset: 0, limit: 10 }, asAlice);
    expect(mine).toMatchObject({ items: [], total: 0 });
    await expect(service().get(bobs[0]!.id, asAlice)).rejects.toMatchObject({ code: 'LOG_NOT_FOUND' });
    const asAdmin = await service().list({ filters: { id: bobs.map((s) => s.id) }, offset: 0, limit: 10 }, admin());
    expect(ids(asAdmin.items).sort()).toEqual(ids(bobs).sort());
    expect(await service().get(bobs[0]!.id, admin())).toMatchObject({ id: bobs[0]!.id, channel: bobs[0]!.channel_id });
  });

  it('ignores administrator-only filters from users (username, user id, channel)', async () => {
    const asAlice = { id: alice.userId!, role: 1 };
    const result = await service().list(
      { filters: { username: 'bob', user_id: bob.userId!, channel: 7 }, offset: 0, limit: 100 },
      asAlice,
    );
    expect(ids(result.items)).toEqual(ids(expected({}, alice.userId)));
    const stat = await service().stat({ username: 'bob', user_id: bob.userId!, channel: 8 }, asAlice);
    expect(stat.quota).toBe(expected({ type: 2 }, alice.userId).reduce((sum, r) => sum + r.quota, 0));
  });

  it('estimates totals past the exact-count limit, and says so', async () => {
    const capped = new LogService({ db: db(), options: gateway.options, exactCountLimit: 5 });
    const many = await capped.list({ filters: {}, offset: 0, limit: 3 }, admin());
    expect(many.totalEstimated).toBe(true);
    expect(many.total).toBeGreaterThanOrEqual(6);
    expect(many.items).toHaveLength(3);
    const filters = { username: 'carol', type: 5, group: 'vip' };
    const want = expected(filters).length;
    expect(want).toBeGreaterThan(0);
    expect(want).toBeLessThanOrEqual(5);
    const few = await capped.list({ filters, offset: 0, limit: 10 }, admin());
    expect(few).toMatchObject({ totalEstimated: false, total: want });
  });
});

describe('GET /api/data/ (hourly aggregates)', () => {
  const hour = 1_700_002_800; // a whole hour
  beforeAll(async () => {
    const add = (userId: number, username: string, modelName: string, at: number, quota: number) =>
      addQuotaData(db(), { userId, username, modelName, at, quota, tokens: quota / 10 });
    await add(alice.userId!, 'alice', 'gpt-4o', hour + 5, 100);
    await add(alice.userId!, 'alice', 'gpt-4o', hour + 3599, 200); // same bucket
    await add(alice.userId!, 'alice', 'gpt-4o', hour + 3600, 400); // next hour
    await add(bob.userId!, 'bob', 'gpt-4o', hour + 10, 1000);
    await add(bob.userId!, 'bob', 'claude-3', hour + 10, 2000);
  });
  const range = `start_timestamp=${hour - 3600}&end_timestamp=${hour + 7200}`;

  it('sums every user per model and hour for administrators', async () => {
    const answer = await root.get(`/api/data/?${range}`);
    expect(answer.body.data).toEqual([
      { model_name: 'claude-3', created_at: hour, count: 1, quota: 2000, token_used: 200 },
      { model_name: 'gpt-4o', created_at: hour, count: 3, quota: 1300, token_used: 130 },
      { model_name: 'gpt-4o', created_at: hour + 3600, count: 1, quota: 400, token_used: 40 },
    ]);
  });

  it('shows one user by username to administrators, and users their own buckets only', async () => {
    const bobs = await root.get(`/api/data/?${range}&username=bob`);
    expect(bobs.body.data.map((r: any) => [r.username, r.model_name, r.quota])).toEqual([
      ['bob', 'claude-3', 2000],
      ['bob', 'gpt-4o', 1000],
    ]);
    for (const url of ['/api/data/self', '/api/data/self/']) {
      const own = await alice.get(`${url}?${range}&username=bob`);
      expect(own.body.data.map((r: any) => [r.user_id, r.created_at, r.count, r.quota])).toEqual([
        [alice.userId, hour, 2, 300],
        [alice.userId, hour + 3600, 1, 400],
      ]);
    }
    expect(refusalOf(await alice.get(`/api/data/?${range}`))).toMatchObject({ status: 200, success: false });
  });

  it('needs both ends of the range, and at most 30 days for users', async () => {
    expect((await alice.get(`/api/data/self?start_timestamp=${hour}`)).body).toMatchObject({
      success: false,
      code: 'INVALID_REQUEST',
    });
    const long = await alice.get(`/api/data/self?start_timestamp=${hour}&end_timestamp=${hour + 2_592_001}`);
    expect(long.status).toBe(200);
    expect(long.body).toMatchObject({ success: false, code: 'DATA_RANGE_TOO_LONG' });
    const zh = await alice.get(`/api/data/self?start_timestamp=${hour}&end_timestamp=${hour + 2_592_001}`, {
      'accept-language': 'zh',
    });
    expect(zh.body.message).toBe('时间跨度不能超过 1 个月');
    expect((await alice.get(`/api/data/self?start_timestamp=${hour}&end_timestamp=${hour + 2_592_000}`)).status).toBe(
      200,
    );
  });
});
