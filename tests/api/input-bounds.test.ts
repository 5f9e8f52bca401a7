import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { clientsFrom, type DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { deepText } from '../support/fuzz.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';

/** Issue 18: bad input on /api and /rest is a 4xx-class refusal with a stable code and changes nothing. */
let gateway: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;
let clients: ReturnType<typeof clientsFrom>;

beforeAll(async () => {
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(
    gatewayEnv(database.options, testNamespace(), { TRUST_PROXY: 'true', GLOBAL_API_RATE_LIMIT: '100000' }),
  );
  root = await setupRoot(gateway.url);
  root.headers['x-forwarded-for'] = '10.19.1.1';
  clients = clientsFrom(() => gateway.url, '10.19.0');
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
});

const db = () => gateway.store.db;
const userRow = (id: number) => db().selectFrom('users').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

/** Sends raw JSON text (so a lone surrogate escape reaches the server as written) with root's session. */
async function raw(method: string, path: string, body?: string) {
  const headers: Record<string, string> = { ...root.headers, cookie: root.cookie, 'new-api-user': String(root.userId) };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${gateway.url}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers, text };
}

describe('text and nesting', () => {
  it('refuses NUL bytes and lone surrogates in body, query and path: 200 envelope on /api, 400 on /rest', async () => {
    const bob = await clients.user('bounds-bob');
    for (const body of ['{"display_name":"a\\u0000b"}', '{"display_name":"x\\ud800y"}', '{"a\\u0000":1}']) {
      const answer = await raw('PUT', '/api/user/self', body);
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ success: false, code: 'malformed_text' });
    }
    const query = await raw('GET', '/api/log/?model_name=a%00b');
    expect(query.body).toMatchObject({ success: false, code: 'malformed_text' });
    // The /rest filter is JSON inside the query: its escape is a NUL only once parsed, and is refused then.
    const filter = await raw('GET', `/rest/user?filter=${encodeURIComponent('{"q":"a\\u0000b"}')}`);
    expect(filter.status).toBe(400);
    expect(filter.body.code).toBe('malformed_text');
    const path = await raw('GET', '/api/user/search?keyword=%ED%A0%80');
    expect(path.status).toBeLessThan(500);
    const rest = await raw('PUT', `/rest/user/${bob.userId}`, '{"display_name":"a\\u0000b"}');
    expect(rest.status).toBe(400);
    expect(rest.body).toMatchObject({ success: false, code: 'malformed_text' });
    const restQuery = await raw('GET', '/rest/user?sort=%00');
    expect(restQuery.status).toBe(400);
    expect(restQuery.body.code).toBe('malformed_text');
    // A pair of surrogates is one valid character and passes.
    const fine = await raw('PUT', '/api/user/self', '{"display_name":"ok \\ud83d\\ude00"}');
    expect(fine.body).toMatchObject({ success: true });
    expect((await bob.get('/api/user/self')).body.data.display_name).not.toContain('\u0000');
  });

  it('refuses bodies nested deeper than 32 levels, 5,000 deep included, and keeps answering', async () => {
    for (const depth of [5000, 33]) {
      const api = await raw('PUT', '/api/option/', `{"key":"x","value":${deepText(depth)}}`);
      expect(api.status).toBe(200);
      expect(api.body).toMatchObject({ success: false, code: 'nested_too_deep' });
      const rest = await raw('POST', '/rest/channel', deepText(depth));
      expect(rest.status).toBe(400);
      expect(rest.body.code).toBe('nested_too_deep');
    }
    // Within the bound the request reaches the route (which judges it on its own terms).
    const shallow = await raw('PUT', '/api/option/', `{"key":"x","value":${deepText(10)}}`);
    expect(shallow.body.code).not.toBe('nested_too_deep');
    expect((await raw('GET', '/api/status')).body.success).toBe(true);
  });
});

describe('numbers', () => {
  it('answers number_out_of_range for ids, pages and timestamps past their real range', async () => {
    for (const path of [
      '/api/user/2147483648',
      '/api/user/Infinity',
      '/api/user/-Infinity',
      '/api/user/1e308',
      '/api/token/1e20',
      '/api/channel/9007199254740993',
      '/api/user/?p=1e308',
      '/api/user/?p=Infinity',
      '/api/log/?start_timestamp=1e20',
      '/api/log/self?type=Infinity',
      '/api/log/?channel=2147483648',
    ]) {
      const answer = await raw('GET', path);
      expect(answer.status, path).toBe(200);
      expect(answer.body, path).toMatchObject({ success: false, code: 'NUMBER_OUT_OF_RANGE' });
    }
    const rest = await raw('GET', '/rest/user/2147483648');
    expect(rest.status).toBe(400);
    expect(rest.body.code).toBe('NUMBER_OUT_OF_RANGE');
    // /rest parses its own filter JSON: a filter past its column's range is refused the same way.
    for (const [resource, filter] of [
      ['user', { status: 1e20 }],
      ['user', { role: 2147483648 }],
      ['channel', { type: 1e308 }],
      ['log', { channel: 2147483648 }],
      ['log', { start_timestamp: 1e300 }],
    ] as const) {
      const answer = await raw('GET', `/rest/${resource}?filter=${encodeURIComponent(JSON.stringify(filter))}`);
      expect(answer.status, JSON.stringify(filter)).toBe(400);
      expect(answer.body.code).toBe('NUMBER_OUT_OF_RANGE');
    }
    // An id list is matched as it is: ids that cannot exist match nothing.
    const ids = await raw('GET', `/rest/user?filter=${encodeURIComponent('{"id":[1e20,2147483648,1]}')}`);
    expect(ids.status).toBe(200);
    expect(ids.body.map((u: { id: number }) => u.id)).toEqual([1]);
    // NaN is not a number at all: the ordinary validation refusal.
    expect((await raw('GET', '/api/user/NaN')).body).toMatchObject({ success: false, code: 'INVALID_REQUEST' });
    // The largest real id is still an id: it is simply not found.
    expect((await raw('GET', '/api/user/2147483647')).body).toMatchObject({ success: false, code: 'USER_NOT_FOUND' });
  });

  it('refuses a quota of 1e308 or 1e20 and leaves the user as it was', async () => {
    const carol = await clients.user('bounds-carol');
    const before = await userRow(carol.userId!);
    for (const quota of ['1e308', '1e20', '-1e20']) {
      const answer = await raw('PUT', '/api/user/', `{"id":${carol.userId},"quota":${quota},"remark":"changed"}`);
      expect(answer.body, quota).toMatchObject({ success: false, code: 'NUMBER_OUT_OF_RANGE' });
    }
    expect(await userRow(carol.userId!)).toEqual(before);
  });
});

describe('no half-written changes', () => {
  it('PUT /api/user/ writes quota and fields in one transaction: a field the store refuses keeps the quota too', async () => {
    const dave = await clients.user('bounds-dave');
    const before = await userRow(dave.userId!);
    // The store itself refuses a remark (as a column constraint or a lost connection would, mid-update).
    await sql`alter table users add constraint remark_bound check (remark <> 'refused by the store')`.execute(db());
    try {
      const answer = await root.put('/api/user/', { id: dave.userId, quota: 777_777, remark: 'refused by the store' });
      expect(answer.body.success).toBe(false);
    } finally {
      await sql`alter table users drop constraint remark_bound`.execute(db());
    }
    expect(await userRow(dave.userId!)).toEqual(before);
    const logs = await db().selectFrom('logs').select('id').where('user_id', '=', dave.userId!).execute();
    expect(logs).toEqual([]);
    // The same change without the refused field goes through whole.
    expect((await root.put('/api/user/', { id: dave.userId, quota: 777_777, remark: 'fine' })).body.success).toBe(true);
    expect(await userRow(dave.userId!)).toMatchObject({ quota: 777_777, remark: 'fine' });
  });

  it('/rest user edits write role and status with the other fields: a refused promotion changes nothing', async () => {
    const boss = await clients.user('bounds-boss');
    expect((await root.post('/api/user/manage', { id: boss.userId, action: 'promote' })).body.success).toBe(true);
    const erin = await clients.user('bounds-erin');
    const before = await userRow(erin.userId!);
    // An administrator may edit a user but not make them an administrator (only root may).
    const answer = await boss.call('PUT', `/rest/user/${erin.userId}`, { quota: 123_456, remark: 'x', role: 10 });
    expect(answer.status).toBe(403);
    expect(answer.body.code).toBe('CANNOT_PROMOTE_TO_ADMIN');
    expect(await userRow(erin.userId!)).toEqual(before);
    // Disabling along with a field edit is one change.
    const both = await boss.call('PUT', `/rest/user/${erin.userId}`, { remark: 'disabled', status: 2 });
    expect(both.status).toBe(200);
    expect(await userRow(erin.userId!)).toMatchObject({ remark: 'disabled', status: 2 });
  });

  it('/rest token and redemption edits refuse a bad status without writing the other fields', async () => {
    const frank = await clients.user('bounds-frank');
    const token = (await frank.post('/api/token/', { name: 'before', unlimited_quota: true })).body.data;
    const tokenAnswer = await frank.call('PUT', `/rest/token/${token.id}`, { name: 'after', status: 99 });
    expect(tokenAnswer.status).toBe(400);
    const tokenRow = await db().selectFrom('tokens').selectAll().where('id', '=', token.id).executeTakeFirstOrThrow();
    expect(tokenRow).toMatchObject({ name: 'before', status: 1 });
    const disabled = await frank.call('PUT', `/rest/token/${token.id}`, { name: 'after', status: 2 });
    expect(disabled.body).toMatchObject({ name: 'after', status: 2 });

    const created = await root.post('/api/redemption/', { name: 'before', count: 1, quota: 1000 });
    expect(created.body.success).toBe(true);
    const code = await db().selectFrom('redemptions').selectAll().orderBy('id', 'desc').executeTakeFirstOrThrow();
    const codeAnswer = await root.call('PUT', `/rest/redemption/${code.id}`, { name: 'after', status: 99 });
    expect(codeAnswer.status).toBe(400);
    expect(codeAnswer.body.code).toBe('REDEMPTION_STATUS_INVALID');
    const codeRow = await db()
      .selectFrom('redemptions')
      .selectAll()
      .where('id', '=', code.id)
      .executeTakeFirstOrThrow();
    expect(codeRow).toEqual(code);
  });
});

describe('CSV exports', () => {
  it('refuses a bad filter in the envelope, never a CSV header followed by a cut connection', async () => {
    for (const path of ['/api/log/export?type=Infinity', '/api/log/self/export?start_timestamp=1e20']) {
      const answer = await raw('GET', path);
      expect(answer.status, path).toBe(200);
      expect(answer.headers.get('content-type'), path).toContain('application/json');
      expect(answer.body, path).toMatchObject({ success: false, code: 'NUMBER_OUT_OF_RANGE' });
    }
  });

  it('reads the first batch before answering 200: a query the store fails is a whole error answer', async () => {
    await sql`alter table logs rename to logs_away`.execute(db());
    let answer: Awaited<ReturnType<typeof raw>>;
    try {
      answer = await raw('GET', '/api/log/export');
    } finally {
      await sql`alter table logs_away rename to logs`.execute(db());
    }
    expect(answer.status).toBe(500);
    expect(answer.headers.get('content-type')).toContain('application/json');
    expect(answer.body).toMatchObject({ success: false, code: 'INTERNAL_ERROR' });
    // And with the store back, the export is a CSV again.
    const csv = await fetch(`${gateway.url}/api/log/export`, {
      headers: { cookie: root.cookie, 'new-api-user': String(root.userId), ...root.headers },
    });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toContain('text/csv');
    // The byte-order mark first (fetch's text() would drop it).
    expect([...new Uint8Array(await csv.arrayBuffer()).subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
  });
});
