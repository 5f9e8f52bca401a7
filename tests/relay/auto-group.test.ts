import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { type DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts';
import { billed as billedBy } from '../support/usage.ts';
import { eventually } from '../support/wait.ts';

// Tokens in the `auto` group (reference §4.2): AutoGroups walked in order, filtered to the groups the
// owner may use; the group that serves is the one billed. Group ratios differ so that a bill in the
// wrong group cannot pass: every quota below is the formula worked out by hand, to the unit.
const RATIOS = { default: 0.5, vip: 2, svip: 3 };
const USAGE = { prompt_tokens: 100, completion_tokens: 50 };
/** (prompt + completion × completion ratio 1) × model ratio 1 × group ratio. */
const quotaIn = (group: keyof typeof RATIOS) => Math.round((100 + 50) * RATIOS[group]);

let gateway: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;
let upstream: MockOpenAI;
const channelIds: Record<string, number> = {};

beforeAll(async () => {
  upstream = await startMockOpenAI();
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(gatewayEnv(database.options, testNamespace()));
  root = await setupRoot(gateway.url);
  await gateway.options.setMany({
    GroupRatio: JSON.stringify(RATIOS),
    // svip comes first but root (group default) may not use it: UserUsableGroups is default and vip.
    AutoGroups: JSON.stringify(['svip', 'vip', 'default']),
    ModelRatio: JSON.stringify({ 'auto-model': 1, 'default-model': 1, 'svip-model': 1 }),
    RetryTimes: '0',
  });
  const channels = [
    { name: 'svip', group: 'svip', models: 'auto-model,svip-model' },
    { name: 'vip', group: 'vip', models: 'auto-model' },
    { name: 'default', group: 'default', models: 'auto-model,default-model' },
  ];
  for (const channel of channels) {
    const created = await root.post('/api/channel/', {
      type: 1,
      key: `key-${channel.name}`,
      base_url: upstream.url,
      ...channel,
    });
    expect(created.body.success).toBe(true);
  }
  const rows = await gateway.store.db.selectFrom('channels').select(['id', 'name']).execute();
  for (const row of rows) channelIds[row.name] = row.id;
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
  await upstream?.close();
});

beforeEach(() => {
  upstream.behaviour = { usage: USAGE };
  upstream.requests.length = 0;
});

async function client(body: Record<string, unknown>): Promise<{ openai: OpenAI; tokenId: number }> {
  const token = await root.post('/api/token/', { name: `auto-${Math.random()}`, unlimited_quota: true, ...body });
  expect(token.body.success).toBe(true);
  const openai = new OpenAI({ apiKey: token.body.data.key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
  // The first request of a new key may race the routing index; wait until the model lists.
  await eventually(
    async () => (await openai.models.list()).data.length,
    (n) => n > 0,
    3000,
  );
  return { openai, tokenId: token.body.data.id };
}

const chat = (openai: OpenAI, model: string) =>
  openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });

/** The upstream key (thus the channel) each recorded request was sent with. */
const keysUsed = () => upstream.requests.map((r) => String(r.headers.authorization).replace('Bearer ', ''));

describe('tokens in the auto group', () => {
  it('go to the first AutoGroups group the owner may use that has a channel, billed at its ratio', async () => {
    const { openai } = await client({ group: 'auto' });
    const log = await billedBy(gateway, () => chat(openai, 'auto-model'));
    expect(keysUsed()).toEqual(['key-vip']);
    expect(log.quota).toBe(quotaIn('vip'));
    expect(log).toMatchObject({ group: 'vip', channel_id: channelIds.vip });
    expect(log.other).toMatchObject({ auto_group: 'vip', group_ratio: RATIOS.vip });
  });

  it('skip groups without a channel for the model, and never use a group the owner may not', async () => {
    const { openai } = await client({ group: 'auto' });
    const log = await billedBy(gateway, () => chat(openai, 'default-model'));
    expect(keysUsed()).toEqual(['key-default']);
    expect(log).toMatchObject({ group: 'default', quota: quotaIn('default') });

    // Only svip serves this model, and svip is not usable by root: no channel, the svip one untouched.
    await expect(chat(openai, 'svip-model')).rejects.toMatchObject({ status: 503 });
    expect(keysUsed()).toEqual(['key-default']);
  });

  it('with cross_group_retry, move to the next group when a group has used its attempts, billed there', async () => {
    const { openai, tokenId } = await client({ group: 'auto', cross_group_retry: true });
    upstream.behaviour = { usage: USAGE, refuseKeys: ['key-vip'] };
    const log = await billedBy(gateway, () => chat(openai, 'auto-model'));
    expect(keysUsed()).toEqual(['key-vip', 'key-default']);
    expect(log.quota).toBe(quotaIn('default'));
    expect(log).toMatchObject({ group: 'default', channel_id: channelIds.default });
    expect(log.other).toMatchObject({
      auto_group: 'default',
      group_ratio: RATIOS.default,
      admin_info: { use_channel: [String(channelIds.vip), String(channelIds.default)] },
    });
    await expectBooksBalance(tokenId);
  });

  it('without cross_group_retry, stay in the first group: the failure is the answer', async () => {
    const { openai } = await client({ group: 'auto' });
    upstream.behaviour = { usage: USAGE, refuseKeys: ['key-vip'] };
    await expect(chat(openai, 'auto-model')).rejects.toMatchObject({ status: 401 });
    expect(keysUsed()).toEqual(['key-vip']);
  });
});

describe('the model list of an auto token', () => {
  it('holds the models of every auto group the owner may use, and none of the others', async () => {
    const { openai } = await client({ group: 'auto' });
    const models = (await openai.models.list()).data.map((m) => m.id);
    expect(models).toEqual(['auto-model', 'default-model']);
  });
});

describe('DefaultUseAutoGroup', () => {
  it('is announced by /api/status and makes tokens created without a group auto tokens', async () => {
    await gateway.options.set('DefaultUseAutoGroup', 'true');
    try {
      const status = (await (await fetch(`${gateway.url}/api/status`)).json()) as { data: Record<string, unknown> };
      expect(status.data.default_use_auto_group).toBe(true);
      const created = await root.post('/api/token/', { name: 'defaulted', unlimited_quota: true });
      expect(created.body.data).toMatchObject({ group: 'auto' });
      const chosen = await root.post('/api/token/', { name: 'own-group', unlimited_quota: true, group: '' });
      expect(chosen.body.data).toMatchObject({ group: '' });
    } finally {
      await gateway.options.set('DefaultUseAutoGroup', 'false');
    }
    const plain = await root.post('/api/token/', { name: 'plain', unlimited_quota: true });
    expect(plain.body.data).toMatchObject({ group: '' });
  });
});

/**
 * The books: what the consume logs charged equals what the token, the user and each channel record as
 * used (the usage writer applies them in batches, hence the wait).
 */
async function expectBooksBalance(tokenId: number): Promise<void> {
  const db = gateway.store.db;
  const sum = async (column: 'token_id' | 'user_id' | 'channel_id', id: number) =>
    Number(
      (
        await db
          .selectFrom('logs')
          .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('quota'), eb.val(0)).as('total'))
          .where('type', '=', 2)
          .where(column, '=', id)
          .executeTakeFirstOrThrow()
      ).total,
    );
  const books = await eventually(
    async () => {
      const token = await db
        .selectFrom('tokens')
        .select('used_quota')
        .where('id', '=', tokenId)
        .executeTakeFirstOrThrow();
      const user = await db
        .selectFrom('users')
        .select(['id', 'used_quota'])
        .where('username', '=', 'root')
        .executeTakeFirstOrThrow();
      const channels = await db.selectFrom('channels').select(['id', 'used_quota']).execute();
      return [
        [Number(token.used_quota), await sum('token_id', tokenId)],
        [Number(user.used_quota), await sum('user_id', user.id)],
        ...(await Promise.all(channels.map(async (c) => [Number(c.used_quota), await sum('channel_id', c.id)]))),
      ];
    },
    (rows) => rows.every(([recorded, logged]) => recorded === logged),
    5000,
  );
  for (const [recorded, logged] of books) expect(recorded).toBe(logged);
  expect(books[0]?.[0]).toBeGreaterThan(0);
}
