import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Keyring } from '../../gateway/src/domain/keyring.ts';
import { TokenService } from '../../gateway/src/domain/tokens/index.ts';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { DashboardClient, refusalOf, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';

let gateway: Gateway;
let drop: () => Promise<void>;
let keyring: Keyring;
let addressCounter = 0;
let userCounter = 0;

/** Each client comes from its own address, so per-IP limits never spill between tests. */
const client = (language = 'en') =>
  new DashboardClient(gateway.url, { 'x-forwarded-for': `10.2.0.${++addressCounter}`, 'accept-language': language });

beforeAll(async () => {
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(
    gatewayEnv(database.options, testNamespace(), { TRUST_PROXY: 'true', GLOBAL_API_RATE_LIMIT: '100000' }),
  );
  await setupRoot(gateway.url);
  // No SECRET_KEY: the gateway generated its master secret into the database; load the same keyring.
  keyring = (await Keyring.load(gateway.store.db, undefined)).keyring;
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
});

/** Registers and signs in a fresh normal user. */
async function user(language = 'en'): Promise<DashboardClient> {
  const username = `tok${++userCounter}`;
  expect((await client().post('/api/user/register', { username, password: 'password-1' })).body).toMatchObject({
    success: true,
  });
  const c = client(language);
  expect((await c.login(username, 'password-1')).body.success).toBe(true);
  return c;
}

async function createToken(c: DashboardClient, body: Record<string, unknown> = {}) {
  const answer = await c.post('/api/token/', { name: 'key', ...body });
  expect(answer.body, JSON.stringify(answer.body)).toMatchObject({ success: true });
  return answer.body.data as { id: number; key: string; name: string; status: number } & Record<string, unknown>;
}

const db = () => gateway.store.db;
const tokenRow = (id: number) => db().selectFrom('tokens').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const liveTokenCount = async (userId: number) =>
  Number(
    (
      await db()
        .selectFrom('tokens')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('user_id', '=', userId)
        .where('deleted_at', 'is', null)
        .executeTakeFirstOrThrow()
    ).n,
  );
const now = () => Math.floor(Date.now() / 1000);
/** yyyy-MM-dd HH:mm:ss in local time, as the console formats it. */
const localText = (seconds: number) => {
  const d = new Date(seconds * 1000);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
};

describe('creating tokens', () => {
  it('creates a token with the spec defaults and answers its sk- key to the owner', async () => {
    const alice = await user();
    const answer = await alice.post('/api/token/', { name: 'first' });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ success: true, message: 'Token created' });
    const token = answer.body.data;
    expect(token).toMatchObject({
      name: 'first',
      user_id: alice.userId,
      status: 1,
      remain_quota: 500000,
      unlimited_quota: false,
      used_quota: 0,
      expired_time: -1,
      model_limits_enabled: false,
      model_limits: '',
      allow_ips: '',
      group: '',
      managed_by: null,
    });
    // The full key once, on creation, without sk- (new-api's clients put sk- in front).
    expect(token.key).toMatch(/^[0-9a-zA-Z]{48}$/);
    expect(Math.abs(token.created_time - now())).toBeLessThan(5);
    expect(token).not.toHaveProperty('key_hmac');
    expect(token).not.toHaveProperty('key_encrypted');
  });

  it('never stores a key in plain text: the row holds its HMAC and a ciphertext', async () => {
    const alice = await user();
    const token = await createToken(alice);
    const bare = token.key;
    const row = await tokenRow(token.id);
    expect(row.key_hmac).toBe(keyring.hmac(bare));
    expect(keyring.decrypt(row.key_encrypted)).toBe(bare);
    expect(JSON.stringify(row)).not.toContain(bare);
    // Nowhere else in the database either (e.g. a log line).
    const logs = await db().selectFrom('logs').select('content').execute();
    expect(JSON.stringify(logs)).not.toContain(bare);
  });

  it('gives every token a different key', async () => {
    const alice = await user();
    const keys = new Set<string>();
    for (let i = 0; i < 5; i++) keys.add((await createToken(alice)).key);
    expect(keys.size).toBe(5);
  });

  it.each([
    ['no name', {}, 'TOKEN_NAME_REQUIRED', '令牌名称不能为空'],
    ['a blank name', { name: '   ' }, 'TOKEN_NAME_REQUIRED', '令牌名称不能为空'],
    ['a 51-character name', { name: 'x'.repeat(51) }, 'TOKEN_NAME_TOO_LONG', '令牌名称过长，最多 50 个字符'],
    ['a negative quota', { name: 'n', remain_quota: -1 }, 'TOKEN_QUOTA_NEGATIVE', '额度值不能为负数'],
    ['a fractional quota', { name: 'n', remain_quota: 1.5 }, 'TOKEN_QUOTA_NOT_INTEGER', '额度必须是整数'],
    [
      'a quota above 1e9 × QuotaPerUnit',
      { name: 'n', remain_quota: 500_000_000_000_001 },
      'TOKEN_QUOTA_TOO_LARGE',
      '额度值超出有效范围，最大值为 500000000000000',
    ],
    ['a quota as text', { name: 'n', remain_quota: '10' }, 'INVALID_REQUEST', undefined],
    ['an unreadable expiry', { name: 'n', expired_time: 'tomorrow' }, 'EXPIRY_INVALID', '过期时间格式错误！'],
    ['an impossible date', { name: 'n', expired_time: '2099-02-30 10:00:00' }, 'EXPIRY_INVALID', '过期时间格式错误！'],
    ['a date without time', { name: 'n', expired_time: '2099-01-01' }, 'EXPIRY_INVALID', '过期时间格式错误！'],
    ['an expiry of 0', { name: 'n', expired_time: 0 }, 'EXPIRY_INVALID', '过期时间格式错误！'],
    ['an expiry in milliseconds', { name: 'n', expired_time: Date.now() + 86_400_000 }, 'EXPIRY_INVALID', undefined],
    ['a past expiry', { name: 'n', expired_time: now() - 60 }, 'EXPIRY_IN_PAST', '过期时间不能早于当前时间'],
    ['a past text expiry', { name: 'n', expired_time: '2001-01-01 00:00:00' }, 'EXPIRY_IN_PAST', undefined],
    ['an invalid IP', { name: 'n', allow_ips: '1.2.3.4\nnot-an-ip' }, 'TOKEN_ALLOW_IP_INVALID', undefined],
    ['a CIDR prefix too long', { name: 'n', allow_ips: '10.0.0.0/33' }, 'TOKEN_ALLOW_IP_INVALID', undefined],
    ['an IPv4 address out of range', { name: 'n', allow_ips: '256.1.1.1' }, 'TOKEN_ALLOW_IP_INVALID', undefined],
    ['a group the user may not use', { name: 'n', group: 'svip' }, 'TOKEN_GROUP_UNUSABLE', '无权使用分组 svip'],
    ['a batch count of 0', { name: 'n', count: 0 }, 'TOKEN_COUNT_INVALID', '批量创建数量必须是 1 到 100 之间的整数'],
    ['a batch count of 101', { name: 'n', count: 101 }, 'TOKEN_COUNT_INVALID', undefined],
    ['a fractional batch count', { name: 'n', count: 1.5 }, 'INVALID_REQUEST', undefined],
    ['a 44-character name in a batch', { name: 'x'.repeat(44), count: 2 }, 'TOKEN_NAME_TOO_LONG', undefined],
  ])('refuses %s and creates nothing', async (_case, body, code, zhMessage) => {
    const alice = await user('zh');
    const answer = await alice.post('/api/token/', body);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ success: false, code });
    if (zhMessage) expect(answer.body.message).toBe(zhMessage);
    expect(answer.body.data).toBeUndefined();
    expect(await liveTokenCount(alice.userId!)).toBe(0);
  });

  it('accepts the limits: 50 characters (CJK too), quota 0 and the maximum, an unlimited token above it', async () => {
    const alice = await user();
    expect((await createToken(alice, { name: 'x'.repeat(50) })).name).toBe('x'.repeat(50));
    expect((await createToken(alice, { name: '令'.repeat(50) })).name).toBe('令'.repeat(50));
    expect((await createToken(alice, { remain_quota: 0 })).remain_quota).toBe(0);
    expect((await createToken(alice, { remain_quota: 500_000_000_000_000 })).remain_quota).toBe(500_000_000_000_000);
    const unlimited = await createToken(alice, { remain_quota: 500_000_000_000_001, unlimited_quota: true });
    expect(unlimited).toMatchObject({ unlimited_quota: true, remain_quota: 500_000_000_000_001 });
  });

  it('reads the expiry as Unix seconds, as yyyy-MM-dd HH:mm:ss in local time, or -1', async () => {
    const alice = await user();
    const inADay = now() + 86_400;
    expect((await createToken(alice, { expired_time: inADay })).expired_time).toBe(inADay);
    expect((await createToken(alice, { expired_time: String(inADay) })).expired_time).toBe(inADay);
    expect((await createToken(alice, { expired_time: localText(inADay) })).expired_time).toBe(inADay);
    expect((await createToken(alice, { expired_time: -1 })).expired_time).toBe(-1);
    expect((await createToken(alice, { expired_time: '-1' })).expired_time).toBe(-1);
  });

  it('cleans up model limits and the IP allow-list', async () => {
    const alice = await user();
    const token = await createToken(alice, {
      model_limits_enabled: true,
      model_limits: ' gpt-4o, ,claude-3 ,gpt-4o',
      allow_ips: '1.2.3.4, 10.0.0.0/8\n ::1 \n\n2001:db8::/32',
    });
    expect(token).toMatchObject({
      model_limits_enabled: true,
      model_limits: 'gpt-4o,claude-3',
      allow_ips: '1.2.3.4\n10.0.0.0/8\n::1\n2001:db8::/32',
    });
  });

  it('takes rate limits per model, normalised; refuses bad ones with RATE_LIMITS_INVALID, HTTP 200', async () => {
    const alice = await user();
    const token = await createToken(alice, { rate_limits: { '*': { rpm: 60, tpm: 0 }, 'gpt-4o': { tpm: 5000 } } });
    expect(token.rate_limits).toEqual({ '*': { rpm: 60 }, 'gpt-4o': { tpm: 5000 } });
    expect((await tokenRow(token.id)).rate_limits).toBe('{"*":{"rpm":60},"gpt-4o":{"tpm":5000}}');
    // Absent: no limit.
    expect((await createToken(alice)).rate_limits).toEqual({});
    const updated = await alice.put('/api/token/', { id: token.id, rate_limits: { 'gpt-4o': { rpm: 2 } } });
    expect(updated.body.data.rate_limits).toEqual({ 'gpt-4o': { rpm: 2 } });
    expect((await alice.get(`/api/token/${token.id}`)).body.data.rate_limits).toEqual({ 'gpt-4o': { rpm: 2 } });
    for (const bad of [
      { '*': { rpm: -1 } },
      { '*': { rpm: 1.5 } },
      { '*': { rpn: 1 } },
      { '*': 5 },
      { ' ': { rpm: 1 } },
    ]) {
      const refused = await alice.post('/api/token/', { name: 'bad', rate_limits: bad });
      expect(refusalOf(refused), JSON.stringify(bad)).toMatchObject({ status: 200, success: false });
    }
    const blank = await alice.post('/api/token/', { name: 'bad', rate_limits: { ' ': { rpm: 1 } } });
    expect(blank.body).toMatchObject({ code: 'RATE_LIMITS_INVALID' });
    expect((await tokenRow(token.id)).rate_limits).toBe('{"gpt-4o":{"rpm":2}}');
  });

  it('accepts the user group, a usable group and auto (with cross-group retry only for auto)', async () => {
    const alice = await user();
    expect((await createToken(alice, { group: 'default' })).group).toBe('default');
    expect((await createToken(alice, { group: 'vip' })).group).toBe('vip');
    expect(await createToken(alice, { group: 'auto', cross_group_retry: true })).toMatchObject({
      group: 'auto',
      cross_group_retry: true,
    });
    expect((await createToken(alice, { group: 'vip', cross_group_retry: true })).cross_group_retry).toBe(false);
  });

  it('creates a batch with count, each name suffixed with - and 6 random letters or digits', async () => {
    const alice = await user();
    const answer = await alice.post('/api/token/', { name: 'batch', count: 5, remain_quota: 1000 });
    expect(answer.body.success).toBe(true);
    const tokens = answer.body.data as Array<{ name: string; key: string; remain_quota: number }>;
    expect(tokens).toHaveLength(5);
    for (const token of tokens) {
      expect(token.name).toMatch(/^batch-[0-9a-zA-Z]{6}$/);
      expect(token.remain_quota).toBe(1000);
      expect(token.key).toMatch(/^[0-9a-zA-Z]{48}$/);
    }
    expect(new Set(tokens.map((t) => t.name)).size).toBe(5);
    expect(new Set(tokens.map((t) => t.key)).size).toBe(5);
    expect(await liveTokenCount(alice.userId!)).toBe(5);
    // count 1 is a list of one, with the name as given.
    const one = await alice.post('/api/token/', { name: 'single', count: 1 });
    expect(one.body.data).toHaveLength(1);
    expect(one.body.data[0].name).toBe('single');
  });

  it('enforces token_setting.max_user_tokens, batches included, deleted tokens not counted', async () => {
    await gateway.options.set('token_setting.max_user_tokens', '3');
    try {
      const alice = await user('zh');
      await createToken(alice);
      await createToken(alice);
      const batch = await alice.post('/api/token/', { name: 'b', count: 2 });
      expect(batch.body).toEqual({
        success: false,
        code: 'TOKEN_LIMIT_REACHED',
        message: '已达到最大令牌数量限制 (3)',
      });
      expect(await liveTokenCount(alice.userId!)).toBe(2);
      const third = await createToken(alice);
      expect((await alice.post('/api/token/', { name: 'fourth' })).body.code).toBe('TOKEN_LIMIT_REACHED');
      expect(await liveTokenCount(alice.userId!)).toBe(3);
      expect((await alice.delete(`/api/token/${third.id}`)).body.success).toBe(true);
      await createToken(alice);
      expect(await liveTokenCount(alice.userId!)).toBe(3);
      // Another user has a limit of their own.
      await createToken(await user());
    } finally {
      await gateway.options.set('token_setting.max_user_tokens', '1000');
    }
  });

  it('holds the limit under concurrent creation', async () => {
    await gateway.options.set('token_setting.max_user_tokens', '3');
    try {
      const alice = await user();
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) => alice.post('/api/token/', { name: `race-${i}` })),
      );
      expect(answers.filter((a) => a.body.success)).toHaveLength(3);
      expect(answers.filter((a) => a.body.code === 'TOKEN_LIMIT_REACHED')).toHaveLength(5);
      expect(await liveTokenCount(alice.userId!)).toBe(3);
    } finally {
      await gateway.options.set('token_setting.max_user_tokens', '1000');
    }
  });

  it('needs a signed-in user', async () => {
    const anonymous = client();
    expect((await anonymous.post('/api/token/', { name: 'x' })).status).toBe(401);
    expect((await anonymous.get('/api/token/')).status).toBe(401);
    expect(await db().selectFrom('tokens').select('id').where('name', '=', 'x').execute()).toEqual([]);
  });
});

describe('listing, getting and searching', () => {
  it('lists own tokens newest first, paged with p and size, keys masked (GET /api/token/?p=0&size=100)', async () => {
    const alice = await user();
    const bob = await user();
    await createToken(bob, { name: 'bobs' });
    const created = [];
    for (let i = 0; i < 3; i++) created.push(await createToken(alice, { name: `t${i}` }));
    const all = await alice.get('/api/token/?p=0&size=100');
    expect(all.body).toMatchObject({ success: true, data: { total: 3, page: 1, page_size: 100 } });
    expect(all.body.data.items.map((t: { name: string }) => t.name)).toEqual(['t2', 't1', 't0']);
    expect(all.body.data.items.map((t: { key: string }) => t.key)).toEqual(
      created.map((t) => `${t.key.slice(0, 4)}**********${t.key.slice(-4)}`).reverse(),
    );
    const second = await alice.get('/api/token/?p=2&page_size=2');
    expect(second.body.data).toMatchObject({ total: 3, page: 2, page_size: 2 });
    expect(second.body.data.items.map((t: { name: string }) => t.name)).toEqual(['t0']);
    expect((await alice.get('/api/token/?size=1000')).body.data.page_size).toBe(100);
    expect((await alice.get('/api/token/?p=abc')).body).toMatchObject({ success: false, code: 'INVALID_REQUEST' });
  });

  it('shows an enabled token past its expiry as 3 and one out of quota as 4; a disabled one stays 2', async () => {
    const alice = await user();
    const expired = await createToken(alice, { name: 'expired' });
    const exhausted = await createToken(alice, { name: 'exhausted', remain_quota: 0 });
    const unlimited = await createToken(alice, { name: 'unlimited', remain_quota: 0, unlimited_quota: true });
    const disabled = await createToken(alice, { name: 'disabled' });
    await db()
      .updateTable('tokens')
      .set({ expired_time: now() - 10 })
      .where('id', '=', expired.id)
      .execute();
    await db()
      .updateTable('tokens')
      .set({ expired_time: now() - 10, status: 2 })
      .where('id', '=', disabled.id)
      .execute();
    const items = (await alice.get('/api/token/?p=0&size=100')).body.data.items as Array<{
      id: number;
      status: number;
    }>;
    const status = Object.fromEntries(items.map((t) => [t.id, t.status]));
    expect(status).toEqual({ [expired.id]: 3, [exhausted.id]: 4, [unlimited.id]: 1, [disabled.id]: 2 });
    expect(exhausted.status).toBe(4);
    expect((await alice.get(`/api/token/${expired.id}`)).body.data.status).toBe(3);
  });

  it('gets an own token; another user id, a missing id or a bad id get nothing', async () => {
    const alice = await user();
    const mallory = await user();
    const token = await createToken(alice, { name: 'mine' });
    const own = await alice.get(`/api/token/${token.id}`);
    expect(own.body).toMatchObject({
      success: true,
      data: { id: token.id, name: 'mine', key: `${token.key.slice(0, 4)}**********${token.key.slice(-4)}` },
    });
    const stolen = await mallory.get(`/api/token/${token.id}`);
    expect(stolen.status).toBe(200);
    expect(stolen.body).toEqual({ success: false, code: 'TOKEN_NOT_FOUND', message: 'Token not found' });
    expect(refusalOf(await alice.get('/api/token/99999'))).toMatchObject({ status: 200, success: false });
    expect((await alice.get('/api/token/abc')).body.code).toBe('INVALID_REQUEST');
  });

  it('searches own tokens by part of the name', async () => {
    const alice = await user();
    const bob = await user();
    await createToken(alice, { name: 'prod-openai' });
    await createToken(alice, { name: 'dev-openai' });
    await createToken(alice, { name: '100%_sure' });
    await createToken(bob, { name: 'prod-bob' });
    const names = async (query: string) =>
      ((await alice.get(`/api/token/search?${query}`)).body.data.items as Array<{ name: string }>).map((t) => t.name);
    expect(await names('keyword=openai')).toEqual(['dev-openai', 'prod-openai']);
    expect(await names('keyword=prod')).toEqual(['prod-openai']);
    expect(await names(`keyword=${encodeURIComponent('%_')}`)).toEqual(['100%_sure']);
    expect(await names('keyword=_')).toEqual(['100%_sure']);
    expect(await names('keyword=bob')).toEqual([]);
    expect(await names('keyword=')).toHaveLength(3);
    const page = await alice.get('/api/token/search?keyword=openai&p=1&size=1');
    expect(page.body.data).toMatchObject({ total: 2, page: 1, page_size: 1 });
  });

  it('searches by the exact key, with or without sk-, and never by part of a key or across users', async () => {
    const alice = await user();
    const bob = await user();
    const token = await createToken(alice, { name: 'wanted' });
    await createToken(alice, { name: 'other' });
    const bobs = await createToken(bob, { name: 'bobs' });
    const search = async (c: DashboardClient, query: string) =>
      ((await c.get(`/api/token/search?${query}`)).body.data.items as Array<{ name: string }>).map((t) => t.name);
    expect(await search(alice, `token=${token.key}`)).toEqual(['wanted']);
    expect(await search(alice, `token=sk-${token.key}`)).toEqual(['wanted']);
    expect(await search(alice, `token=${token.key}-12`)).toEqual(['wanted']);
    expect(await search(alice, `token=${token.key.slice(0, 17)}`)).toEqual([]);
    expect(await search(alice, `token=${bobs.key}`)).toEqual([]);
    expect(await search(alice, `token=${token.key}&keyword=other`)).toEqual([]);
    expect(await search(bob, `token=${token.key}`)).toEqual([]);
  });

  it('looks keys up by HMAC: a broken ciphertext is still found, a changed HMAC is not', async () => {
    const alice = await user();
    const token = await createToken(alice, { name: 'by-hmac' });
    const search = async () =>
      (await alice.get(`/api/token/search?token=${token.key}`)).body.data.items as Array<{ id: number; key: string }>;
    await db().updateTable('tokens').set({ key_encrypted: 'v1:garbage' }).where('id', '=', token.id).execute();
    expect(await search()).toEqual([expect.objectContaining({ id: token.id, key: '' })]);
    await db().updateTable('tokens').set({ key_hmac: 'changed' }).where('id', '=', token.id).execute();
    expect(await search()).toEqual([]);
  });

  it('reveals the full key of an own token only (POST /api/token/:id/key)', async () => {
    const alice = await user();
    const mallory = await user();
    const token = await createToken(alice);
    const revealed = await alice.post(`/api/token/${token.id}/key`);
    expect(revealed.body).toEqual({ success: true, message: '', data: { key: token.key } });
    expect(revealed.headers.get('cache-control')).toBe('no-store');
    const stolen = await mallory.post(`/api/token/${token.id}/key`);
    expect(stolen.status).toBe(200);
    expect(JSON.stringify(stolen.body)).not.toContain(token.key);
  });

  it("reveals several own keys at once (POST /api/token/batch/keys), leaving out other users' tokens", async () => {
    const alice = await user();
    const mallory = await user();
    const [first, second] = [await createToken(alice), await createToken(alice)];
    const theirs = await createToken(mallory);
    const revealed = await alice.post('/api/token/batch/keys', { ids: [first!.id, second!.id, theirs.id] });
    expect(revealed.body).toEqual({
      success: true,
      message: '',
      data: { keys: { [first!.id]: first!.key, [second!.id]: second!.key } },
    });
    expect(refusalOf(await alice.post('/api/token/batch/keys', { ids: [] }))).toEqual({
      status: 200,
      success: false,
      code: 'INVALID_REQUEST',
    });
  });
});

describe('updating', () => {
  it('updates the given fields of an own token and answers the token', async () => {
    const alice = await user();
    const token = await createToken(alice, { name: 'old' });
    const inAWeek = now() + 7 * 86_400;
    const answer = await alice.put('/api/token/', {
      id: token.id,
      name: 'new',
      remain_quota: 42,
      expired_time: localText(inAWeek),
      model_limits_enabled: true,
      model_limits: 'gpt-4o,gpt-4o-mini',
      allow_ips: '192.168.0.0/16',
      group: 'vip',
    });
    expect(answer.body).toMatchObject({
      success: true,
      message: 'Token updated',
      data: {
        id: token.id,
        name: 'new',
        key: `${token.key.slice(0, 4)}**********${token.key.slice(-4)}`,
        remain_quota: 42,
        expired_time: inAWeek,
        model_limits_enabled: true,
        model_limits: 'gpt-4o,gpt-4o-mini',
        allow_ips: '192.168.0.0/16',
        group: 'vip',
        status: 1,
      },
    });
    expect(await tokenRow(token.id)).toMatchObject({ name: 'new', remain_quota: 42, group: 'vip' });
    // Absent fields keep their values.
    expect((await alice.put('/api/token/', { id: token.id, name: 'newer' })).body.data).toMatchObject({
      name: 'newer',
      remain_quota: 42,
      group: 'vip',
    });
  });

  it.each([
    ['an empty name', { name: '' }, 'TOKEN_NAME_REQUIRED'],
    ['a 51-character name', { name: 'y'.repeat(51) }, 'TOKEN_NAME_TOO_LONG'],
    ['a negative quota', { remain_quota: -5 }, 'TOKEN_QUOTA_NEGATIVE'],
    ['a fractional quota', { remain_quota: 0.5 }, 'TOKEN_QUOTA_NOT_INTEGER'],
    ['an unreadable expiry', { expired_time: '31/12/2099' }, 'EXPIRY_INVALID'],
    ['a past expiry', { expired_time: 1_000_000_000 }, 'EXPIRY_IN_PAST'],
    ['an invalid IP', { allow_ips: '1.2.3' }, 'TOKEN_ALLOW_IP_INVALID'],
    ['an unusable group', { group: 'svip' }, 'TOKEN_GROUP_UNUSABLE'],
    ['a missing id', { id: undefined, name: 'z' }, 'INVALID_REQUEST'],
  ])('refuses %s and changes nothing', async (_case, body, code) => {
    const alice = await user();
    const token = await createToken(alice, { name: 'keep', remain_quota: 7 });
    const before = await tokenRow(token.id);
    const answer = await alice.put('/api/token/', { id: token.id, ...body });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ success: false, code });
    expect(await tokenRow(token.id)).toEqual(before);
  });

  it('keeps an expiry that has passed when the edit does not change it', async () => {
    const alice = await user();
    const token = await createToken(alice);
    const past = now() - 3600;
    await db().updateTable('tokens').set({ expired_time: past }).where('id', '=', token.id).execute();
    const answer = await alice.put('/api/token/', { id: token.id, name: 'renamed', expired_time: past });
    expect(answer.body.data).toMatchObject({ name: 'renamed', expired_time: past, status: 3 });
  });

  it('another user cannot update, re-status or delete a token and changes nothing', async () => {
    const alice = await user();
    const mallory = await user();
    const token = await createToken(alice, { name: 'alices' });
    const before = await tokenRow(token.id);
    const attempts = [
      await mallory.put('/api/token/', { id: token.id, name: 'pwned', remain_quota: 0 }),
      await mallory.put('/api/token/?status_only=true', { id: token.id, status: 2 }),
      await mallory.delete(`/api/token/${token.id}`),
      await mallory.delete(`/api/token/${token.id}/`),
    ];
    for (const attempt of attempts) {
      expect(attempt.status).toBe(200);
      expect(attempt.body).toEqual({ success: false, code: 'TOKEN_NOT_FOUND', message: 'Token not found' });
    }
    const batch = await mallory.post('/api/token/batch', { ids: [token.id] });
    expect(batch.body).toMatchObject({ success: true, data: 0 });
    expect(await tokenRow(token.id)).toEqual(before);
  });
});

describe('status-only updates', () => {
  it('disables and enables an own token (PUT /api/token/?status_only=true)', async () => {
    const alice = await user();
    const token = await createToken(alice);
    const disabled = await alice.put('/api/token/?status_only=true', { id: token.id, status: 2, name: 'ignored' });
    expect(disabled.body).toMatchObject({ success: true, data: { status: 2, name: 'key' } });
    expect((await tokenRow(token.id)).status).toBe(2);
    const enabled = await alice.put('/api/token/?status_only=true', { id: token.id, status: 1 });
    expect(enabled.body.data.status).toBe(1);
    expect((await tokenRow(token.id)).status).toBe(1);
  });

  it.each([
    ['status 3', { status: 3 }],
    ['status 4', { status: 4 }],
    ['no status', {}],
  ])('refuses %s', async (_case, body) => {
    const alice = await user();
    const token = await createToken(alice);
    const answer = await alice.put('/api/token/?status_only=true', { id: token.id, ...body });
    expect(answer.body).toMatchObject({ success: false, code: 'TOKEN_STATUS_INVALID' });
    expect((await tokenRow(token.id)).status).toBe(1);
  });

  it('cannot enable an expired token, with new-api’s message, until its expiry is fixed', async () => {
    const alice = await user('zh');
    const token = await createToken(alice);
    await db()
      .updateTable('tokens')
      .set({ status: 3, expired_time: now() - 60 })
      .where('id', '=', token.id)
      .execute();
    const answer = await alice.put('/api/token/?status_only=true', { id: token.id, status: 1 });
    expect(answer.body).toEqual({
      success: false,
      code: 'TOKEN_EXPIRED_CANNOT_ENABLE',
      message: '令牌已过期，无法启用，请先修改令牌过期时间，或者设置为永不过期',
    });
    expect((await tokenRow(token.id)).status).toBe(3);
    expect((await alice.put('/api/token/', { id: token.id, expired_time: -1 })).body.data.status).toBe(3);
    expect((await alice.put('/api/token/?status_only=true', { id: token.id, status: 1 })).body.data.status).toBe(1);
  });

  it('cannot enable an exhausted token, with new-api’s message, until it has quota or is unlimited', async () => {
    const alice = await user('zh');
    const token = await createToken(alice, { remain_quota: 0 });
    await db().updateTable('tokens').set({ status: 4 }).where('id', '=', token.id).execute();
    const answer = await alice.put('/api/token/?status_only=true', { id: token.id, status: 1 });
    expect(answer.body).toEqual({
      success: false,
      code: 'TOKEN_EXHAUSTED_CANNOT_ENABLE',
      message: '令牌可用额度已用尽，无法启用，请先修改令牌剩余额度，或者设置为无限额度',
    });
    expect((await tokenRow(token.id)).status).toBe(4);
    await alice.put('/api/token/', { id: token.id, unlimited_quota: true });
    expect((await alice.put('/api/token/?status_only=true', { id: token.id, status: 1 })).body.data.status).toBe(1);
  });
});

describe('deleting', () => {
  it('deletes an own token (with or without the trailing slash): gone from get, list and key search', async () => {
    const alice = await user();
    const first = await createToken(alice, { name: 'first' });
    const second = await createToken(alice, { name: 'second' });
    expect((await alice.delete(`/api/token/${first.id}`)).body).toEqual({ success: true, message: 'Token deleted' });
    expect((await alice.delete(`/api/token/${second.id}/`)).body.success).toBe(true);
    expect(refusalOf(await alice.get(`/api/token/${first.id}`))).toMatchObject({ status: 200, success: false });
    expect((await alice.get('/api/token/')).body.data.total).toBe(0);
    expect((await alice.get(`/api/token/search?token=${first.key}`)).body.data.items).toEqual([]);
    expect((await tokenRow(first.id)).deleted_at).not.toBeNull();
    expect(refusalOf(await alice.delete(`/api/token/${first.id}`))).toMatchObject({ status: 200, success: false });
  });

  it('batch-deletes own tokens only and answers the count (POST /api/token/batch)', async () => {
    const alice = await user();
    const bob = await user();
    const a1 = await createToken(alice);
    const a2 = await createToken(alice);
    const a3 = await createToken(alice);
    const b1 = await createToken(bob);
    const answer = await alice.post('/api/token/batch', { ids: [a1.id, a2.id, a2.id, b1.id, 99999] });
    expect(answer.body).toEqual({ success: true, message: 'Deleted 2 tokens', data: 2 });
    expect(await liveTokenCount(alice.userId!)).toBe(1);
    expect((await tokenRow(a3.id)).deleted_at).toBeNull();
    expect((await tokenRow(b1.id)).deleted_at).toBeNull();
    expect((await alice.post('/api/token/batch', { ids: [] })).body.code).toBe('INVALID_REQUEST');
    expect((await alice.post('/api/token/batch', {})).body.code).toBe('INVALID_REQUEST');
    expect((await alice.post('/api/token/batch', { ids: ['x'] })).body.code).toBe('INVALID_REQUEST');
  });
});

describe('managed tokens (AccessToken resources)', () => {
  async function managedToken(c: DashboardClient) {
    const token = await createToken(c, { name: 'ci-bot' });
    await db()
      .updateTable('tokens')
      .set({ managed_by: 'tollgate-operator', managed_namespace: 'apps', managed_name: 'ci-bot', managed_uid: 'u-1' })
      .where('id', '=', token.id)
      .execute();
    return token;
  }

  it('refuses edits, status changes and deletes naming the resource, and changes nothing', async () => {
    const alice = await user();
    const token = await managedToken(alice);
    const plain = await createToken(alice, { name: 'plain' });
    const before = await tokenRow(token.id);
    const attempts = [
      await alice.put('/api/token/', { id: token.id, name: 'renamed' }),
      await alice.put('/api/token/', { id: token.id, remain_quota: 1 }),
      await alice.put('/api/token/?status_only=true', { id: token.id, status: 2 }),
      await alice.delete(`/api/token/${token.id}`),
      await alice.post('/api/token/batch', { ids: [plain.id, token.id] }),
    ];
    for (const attempt of attempts) {
      expect(attempt.status).toBe(200);
      expect(attempt.body).toMatchObject({ success: false, code: 'MANAGED_BY_RESOURCE' });
      expect(attempt.body.message).toContain('AccessToken apps/ci-bot');
    }
    expect(await tokenRow(token.id)).toEqual(before);
    expect((await tokenRow(plain.id)).deleted_at).toBeNull();
  });

  it('still lists, reveals, accepts an edit that changes nothing, and shows system statuses', async () => {
    const alice = await user();
    const token = await managedToken(alice);
    const listed = (await alice.get('/api/token/')).body.data.items[0];
    expect(listed).toMatchObject({ id: token.id, managed_by: 'tollgate-operator', managed_name: 'ci-bot' });
    expect((await alice.post(`/api/token/${token.id}/key`)).body.data.key).toBe(token.key);
    expect((await alice.put('/api/token/', { id: token.id, name: 'ci-bot', remain_quota: 500000 })).body.success).toBe(
      true,
    );
    await db().updateTable('tokens').set({ remain_quota: 0 }).where('id', '=', token.id).execute();
    expect((await alice.get(`/api/token/${token.id}`)).body.data.status).toBe(4);
  });
});

describe('the generic list for the REST dialect', () => {
  it('filters, sorts by whitelisted fields, windows, and stays inside the actor’s tokens', async () => {
    const alice = await user();
    const bob = await user();
    const tokens = new TokenService({ db: db(), options: gateway.options, keyring });
    const b = await createToken(alice, { name: 'b', remain_quota: 30 });
    const a = await createToken(alice, { name: 'a', remain_quota: 10 });
    const c = await createToken(alice, { name: 'c', remain_quota: 20 });
    await createToken(bob, { name: 'a' });
    await alice.put('/api/token/?status_only=true', { id: c.id, status: 2 });
    const actor = { id: alice.userId!, group: 'default' };
    const names = (r: { items: Array<{ name: string }> }) => r.items.map((t) => t.name);

    const byName = await tokens.list({ sort: { field: 'name', order: 'ASC' }, offset: 0, limit: 10 }, actor);
    expect(names(byName)).toEqual(['a', 'b', 'c']);
    expect(byName.total).toBe(3);
    const byQuota = await tokens.list({ sort: { field: 'remain_quota', order: 'DESC' }, offset: 1, limit: 1 }, actor);
    expect(byQuota).toMatchObject({ total: 3, items: [{ name: 'c' }] });
    expect(names(await tokens.list({ filters: { status: 2 }, offset: 0, limit: 10 }, actor))).toEqual(['c']);
    expect(names(await tokens.list({ filters: { id: [a.id, b.id] }, offset: 0, limit: 10 }, actor))).toEqual([
      'a',
      'b',
    ]);
    expect(names(await tokens.list({ filters: { name: 'a' }, offset: 0, limit: 10 }, actor))).toEqual(['a']);
    expect(names(await tokens.list({ filters: { token: b.key }, offset: 0, limit: 10 }, actor))).toEqual(['b']);
    await expect(
      tokens.list({ sort: { field: 'key_hmac', order: 'ASC' }, offset: 0, limit: 10 }, actor),
    ).rejects.toMatchObject({ code: 'SORT_FIELD_UNSUPPORTED' });
    const asBob = await tokens.list({ offset: 0, limit: 10 }, { id: bob.userId!, group: 'default' });
    expect(names(asBob)).toEqual(['a']);
  });
});
