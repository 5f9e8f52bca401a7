import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { type MockAnthropic, startMockAnthropic } from '../support/mock-anthropic.ts';
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts';
import { billed as billedBy } from '../support/usage.ts';
import { eventually } from '../support/wait.ts';

// Expression (tiered_expr) billing through the relay. Each expected quota is worked out here from
// new-api's formula — cost in USD (tokens × USD per 1M / 1e6) × QuotaPerUnit × group ratio — and compared,
// to the unit, with the consume log and with the books of the user, the token and the channels.
const QPU = 500_000;
const GROUP = 0.8;
const CLAUDE = 'claude-sonnet-4-20250514';
const SONNET_EXPR =
  'len <= 200000 ? tier("standard", p * 3 + c * 15 + cr * 0.3) : tier("long_context", p * 6 + c * 22.5 + cr * 0.6)';
const FAST_EXPR =
  'tier("base", p * 1 + c * 4) * (param("service_tier") == "priority" ? 2 : 1) * (header("x-fast") == "yes" ? 3 : 1)';

let gateway: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;
let openaiUp: MockOpenAI;
let anthropicUp: MockAnthropic;
let user: DashboardClient;
let key: string;
let tokenId: number;

beforeAll(async () => {
  [openaiUp, anthropicUp] = await Promise.all([startMockOpenAI(), startMockAnthropic()]);
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(gatewayEnv(database.options, testNamespace()));
  root = await setupRoot(gateway.url);
  for (const [type, url, models] of [
    [14, anthropicUp.url, CLAUDE],
    [1, openaiUp.url, 'gpt-fast'],
  ] as const) {
    const channel = await root.post('/api/channel/', { name: `c${type}`, type, key: 'sk-up', base_url: url, models });
    expect(channel.body.success).toBe(true);
  }
  await gateway.options.set('GroupRatio', JSON.stringify({ default: GROUP }));
  // Through /api/option/ as the console saves them.
  for (const [k, value] of [
    ['billing_setting.billing_mode', { [CLAUDE]: 'tiered_expr', 'gpt-fast': 'tiered_expr' }],
    ['billing_setting.billing_expr', { [CLAUDE]: SONNET_EXPR, 'gpt-fast': FAST_EXPR }],
  ] as const) {
    const saved = await root.put('/api/option/', { key: k, value: JSON.stringify(value) });
    expect(saved.body).toMatchObject({ success: true });
  }
  // A user whose wallet and token are below the trust quota, so each request is reserved and settled.
  user = new DashboardClient(gateway.url);
  expect((await user.post('/api/user/register', { username: 'tiered', password: 'password-1' })).body.success).toBe(
    true,
  );
  await user.login('tiered', 'password-1');
  expect((await root.put('/api/user/', { id: user.userId, username: 'tiered', quota: 4 * QPU })).body.success).toBe(
    true,
  );
  const token = await user.post('/api/token/', { name: 'tiered', remain_quota: 3 * QPU, unlimited_quota: false });
  key = token.body.data.key;
  tokenId = token.body.data.id;
  const openai = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
  await eventually(
    async () => (await openai.models.list()).data.length,
    (n) => n === 2,
    2000,
  );
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
  await Promise.all([openaiUp?.close(), anthropicUp?.close()]);
});

const billed = (call: () => Promise<unknown>) => billedBy(gateway, call);

describe('expression billing through the relay', () => {
  it('refuses an expression that does not compile, naming the model and the position', async () => {
    const answer = await root.put('/api/option/', {
      key: 'billing_setting.billing_expr',
      value: JSON.stringify({ [CLAUDE]: SONNET_EXPR, broken: 'p * 2 + q * 3' }),
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ success: false, code: 'OPTION_INVALID_BILLING_EXPR' });
    expect(answer.body.message).toContain('broken');
    expect(answer.body.message).toContain('position 9');
    const zone = await root.put('/api/option/', { key: 'billing_setting.timezone', value: 'Mars/Base' });
    expect(zone.body).toMatchObject({ success: false, code: 'OPTION_INVALID_TIME_ZONE' });
  });

  it('bills a 250K-token Claude prompt at the >200K tier, to the unit', async () => {
    anthropicUp.behaviour = {
      usage: { input_tokens: 240_000, cache_read_input_tokens: 10_000, output_tokens: 1_234 },
    };
    const claude = new Anthropic({ apiKey: key, baseURL: gateway.url, maxRetries: 0 });
    const log = await billed(() =>
      claude.messages.create({ model: CLAUDE, max_tokens: 2000, messages: [{ role: 'user', content: 'long read' }] }),
    );
    // Claude's input excludes the cache: len = 240,000 + 10,000 = 250,000 > 200,000, so long_context:
    // (240,000 × 6 + 1,234 × 22.5 + 10,000 × 0.6) / 1M USD = $1.473765; × 500,000 × 0.8 = 589,506.
    const expected = Math.round(((240_000 * 6 + 1_234 * 22.5 + 10_000 * 0.6) / 1e6) * QPU * GROUP);
    expect(expected).toBe(589_506);
    expect(log.quota).toBe(expected);
    expect(log.other).toMatchObject({
      billing_mode: 'tiered_expr',
      matched_tier: 'long_context',
      expr_b64: Buffer.from(SONNET_EXPR).toString('base64'),
      group_ratio: GROUP,
      model_ratio: 0,
    });
    expect(log.other.expr_cost_usd).toBeCloseTo(1.473765, 10);
  });

  it('bills a short Claude prompt at the standard tier', async () => {
    anthropicUp.behaviour = { usage: { input_tokens: 1_000, output_tokens: 100 } };
    const claude = new Anthropic({ apiKey: key, baseURL: gateway.url, maxRetries: 0 });
    const log = await billed(() =>
      claude.messages.create({ model: CLAUDE, max_tokens: 200, messages: [{ role: 'user', content: 'hi' }] }),
    );
    expect(log.other.matched_tier).toBe('standard');
    expect(log.quota).toBe(Math.round(((1_000 * 3 + 100 * 15) / 1e6) * QPU * GROUP));
  });

  it('changes the price by a request field and by a header', async () => {
    openaiUp.behaviour = { usage: { prompt_tokens: 10_000, completion_tokens: 1_000 } };
    const base = ((10_000 * 1 + 1_000 * 4) / 1e6) * QPU * GROUP;
    const ask = (body: Record<string, unknown>, headers: Record<string, string> = {}) => {
      const openai = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0, defaultHeaders: headers });
      return billed(() =>
        openai.chat.completions.create({
          model: 'gpt-fast',
          messages: [{ role: 'user', content: 'hi' }],
          ...body,
        } as OpenAI.ChatCompletionCreateParamsNonStreaming),
      );
    };
    expect((await ask({})).quota).toBe(Math.round(base));
    expect((await ask({ service_tier: 'priority' })).quota).toBe(Math.round(base * 2));
    expect((await ask({}, { 'x-fast': 'yes' })).quota).toBe(Math.round(base * 3));
    const both = await ask({ service_tier: 'priority' }, { 'x-fast': 'yes' });
    expect(both.quota).toBe(Math.round(base * 6));
    expect(both.other.request_rules).toEqual([
      { cond: 'param("service_tier") == "priority"', multiplier: 2, matched: true },
      { cond: 'header("x-fast") == "yes"', multiplier: 3, matched: true },
    ]);
  });

  it('shows tiered models on the pricing page by their expression and tiers, not a flat ratio', async () => {
    const answer = await user.get('/api/pricing');
    const item = (answer.body.data as Array<Record<string, unknown>>).find((i) => i.model_name === CLAUDE);
    expect(item).toMatchObject({
      billing_mode: 'tiered_expr',
      billing_expr: SONNET_EXPR,
      billing_tiers: ['standard', 'long_context'],
      model_ratio: 0,
      model_price: 0,
      configured: true,
    });
  });

  it('keeps the books balanced: logs, user, token and channels agree, to the unit', async () => {
    const db = gateway.store.db;
    // The ledger leases quota out of the rows to the pod and writes spending back every few seconds: what a
    // lease row still holds is the account's too (initial = balance + lease rows + what was charged).
    const leased = async (type: string, id: number) =>
      Number(
        (
          await db
            .selectFrom('quota_leases')
            .select((eb) => eb.fn.sum<number>('amount').as('amount'))
            .where('account_type', '=', type)
            .where('account_id', '=', id)
            .executeTakeFirstOrThrow()
        ).amount ?? 0,
      );
    const books = async () => {
      const account = await db
        .selectFrom('users')
        .select(['id', 'quota', 'used_quota'])
        .where('username', '=', 'tiered')
        .executeTakeFirstOrThrow();
      const token = await db
        .selectFrom('tokens')
        .select(['remain_quota', 'used_quota'])
        .where('id', '=', tokenId)
        .executeTakeFirstOrThrow();
      const logs = await db
        .selectFrom('logs')
        .select((eb) => eb.fn.sum<number>('quota').as('total'))
        .where('type', '=', 2)
        .where('username', '=', 'tiered')
        .executeTakeFirstOrThrow();
      const channels = await db
        .selectFrom('channels')
        .select((eb) => eb.fn.sum<number>('used_quota').as('total'))
        .executeTakeFirstOrThrow();
      return {
        charged: Number(logs.total ?? 0),
        channels: Number(channels.total ?? 0),
        userUsed: account.used_quota,
        wallet: account.quota + (await leased('user', account.id)),
        tokenUsed: token.used_quota,
        tokenLeft: token.remain_quota + (await leased('token', tokenId)),
      };
    };
    const balanced = (b: Awaited<ReturnType<typeof books>>) =>
      b.userUsed === b.charged &&
      b.channels === b.charged &&
      b.tokenUsed === b.charged &&
      b.wallet === 4 * QPU - b.charged &&
      b.tokenLeft === 3 * QPU - b.charged;
    const final = await eventually(books, balanced, 15_000);
    expect(final.charged).toBeGreaterThan(589_506);
    expect(final).toEqual({
      charged: final.charged,
      channels: final.charged,
      userUsed: final.charged,
      wallet: 4 * QPU - final.charged,
      tokenUsed: final.charged,
      tokenLeft: 3 * QPU - final.charged,
    });
  });
});
