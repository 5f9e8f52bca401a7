import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestStore } from '../../../../tests/support/database.ts';
import { compileExpression } from '../../domain/billing/expr/index.ts';
import { fakeOptions } from '../../domain/billing/fake-options.ts';
import { countTextTokens } from '../../domain/billing/index.ts';
import { QuotaLedger } from '../../domain/ledger/index.ts';
import { OpenAIStreamObserver } from '../protocols/openai/stream.ts';
import { jsonEvent, type SseEvent } from '../sse.ts';
import type { ModelPrice } from '../types.ts';
import { type CompletionBudget, completionBudget } from './budget.ts';
import { StreamGuard } from './guard.ts';

let store: Awaited<ReturnType<typeof createTestStore>>;
let ledger: QuotaLedger;

beforeAll(async () => {
  store = await createTestStore();
  ledger = await QuotaLedger.start({ db: store.store.db, holder: 'guard-test' });
});
afterAll(async () => {
  await ledger?.close();
  await store?.dispose();
});

const MODEL = 'gpt-4o';
/** 1 quota a token, prompt and completion alike: quota reads as tokens. */
const price: ModelPrice = {
  modelRatio: 1,
  completionRatio: 1,
  cacheRatio: 1,
  cacheCreationRatio: 1,
  imageRatio: 1,
  audioRatio: 1,
  audioCompletionRatio: 1,
  groupRatio: 1,
  configured: true,
};
const PIECE = ' tick tock'.repeat(5);
const PIECE_TOKENS = countTextTokens(MODEL, PIECE);
const PROMPT = 50;

async function account(tokenQuota: number) {
  const db = store.store.db;
  const user = await db
    .insertInto('users')
    .values({ username: `u${randomUUID().slice(0, 8)}`, password: 'x', created_at: 0, quota: 10_000_000 })
    .returning('id')
    .executeTakeFirstOrThrow();
  const token = await db
    .insertInto('tokens')
    .values({
      user_id: user.id,
      key_hmac: randomUUID(),
      key_encrypted: 'x',
      name: 't',
      created_time: 0,
      remain_quota: tokenQuota,
      unlimited_quota: false,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { userId: user.id, tokenId: token.id };
}

/** A chat chunk with one piece of text, as an upstream streams it. */
const chunk = (): SseEvent =>
  jsonEvent({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: PIECE } }] });

/** A model priced by an expression, rather than `price`: its budget, and the quota of a completion. */
interface Priced {
  price: ModelPrice;
  budget: CompletionBudget;
  quotaOf: (completionTokens: number) => number;
}

/**
 * Streams `chunks` pieces through a guard holding `reserve` of a token with `tokenQuota`, as forward.ts
 * does: at `price` with a budget of `stepTokens`, or as `priced` says.
 */
async function stream(options: {
  tokenQuota: number;
  reserve: number;
  stepTokens: number;
  chunks: number;
  priced?: Priced;
}) {
  const ids = await account(options.tokenQuota);
  const reservation = await ledger.reserve({ ...ids, amount: options.reserve });
  let cuts = 0;
  const priced = options.priced ?? {
    price,
    budget: { tokens: options.stepTokens, quota: options.stepTokens, quotaPerToken: 1 },
    quotaOf: (completionTokens: number) => PROMPT + completionTokens,
  };
  const guard = new StreamGuard({
    ledger,
    reservation,
    budget: priced.budget,
    price: priced.price,
    options: fakeOptions(),
    model: MODEL,
    promptEstimate: () => PROMPT,
    onCut: () => cuts++,
  });
  const observer = new OpenAIStreamObserver('openai-chat');
  let textReads = 0;
  const counted = {
    observe: (event: SseEvent) => observer.observe(event),
    get usage() {
      return observer.usage;
    },
    get text() {
      textReads++;
      return observer.text;
    },
    get toolCalls() {
      return observer.toolCalls;
    },
  };
  const check = guard.follow(counted);
  let delivered = 0;
  let cut = false;
  for (let i = 0; i < options.chunks; i++) {
    const event = chunk();
    counted.observe(event);
    const goOn = await check(event);
    delivered++;
    if (!goOn) {
      cut = true;
      break;
    }
  }
  const spent = priced.quotaOf(delivered * PIECE_TOKENS);
  return { guard, reservation, cuts, cut, delivered, spent, textReads, check };
}

describe('the stream guard', () => {
  it('tops the reservation up as the output grows, reading the text only at thresholds', async () => {
    const run = await stream({ tokenQuota: 1_000_000, reserve: PROMPT + 1_000, stepTokens: 1_000, chunks: 200 });
    expect(run.cut).toBe(false);
    expect(run.cuts).toBe(0);
    // Held at least what was delivered, and at most one step and a half more.
    expect(run.guard.reserved).toBeGreaterThanOrEqual(run.spent);
    expect(run.guard.reserved).toBeLessThanOrEqual(run.spent + 1_500);
    expect(ledger.stats().reservedQuota).toBe(2 * run.guard.reserved);
    expect(run.textReads).toBeLessThan(200 / 2);
    await ledger.settle(run.reservation, run.spent);
  });

  it('cuts the stream once a refused top-up leaves it nothing, past its hold by at most one chunk', async () => {
    const tokenQuota = 3_000;
    const run = await stream({ tokenQuota, reserve: PROMPT + 200, stepTokens: 200, chunks: 1_000 });
    expect(run.cut).toBe(true);
    expect(run.cuts).toBe(1);
    expect(run.guard.reserved).toBeLessThanOrEqual(tokenQuota);
    expect(run.spent).toBeGreaterThanOrEqual(run.guard.reserved);
    expect(run.spent - run.guard.reserved).toBeLessThanOrEqual(PIECE_TOKENS);
    // The guard stays shut; settling what was delivered releases every top-up.
    expect(await run.check(chunk())).toBe(false);
    expect(run.cuts).toBe(1);
    await ledger.settle(run.reservation, run.spent);
    expect(ledger.stats().reservedQuota).toBe(0);
  });

  it('meters an expression-priced stream by its expression: into a dearer tier, cut past its hold by one chunk', async () => {
    // Quota (QuotaPerUnit 500,000: cost / 2): the prompt at 1 a token, completion at 1 up to 300 tokens, 3 past them.
    const expression = compileExpression(
      'c <= 300 ? tier("short", p * 2 + c * 2) : tier("long", p * 2 + 600 + (c - 300) * 6)',
    );
    const expressionPrice: ModelPrice = { ...price, modelRatio: 0, expression };
    const options = fakeOptions({ 'quota_setting.default_completion_tokens': { default: 100 } });
    const budget = completionBudget(
      'openai-chat',
      MODEL,
      expressionPrice,
      { promptEstimate: PROMPT, maxTokens: 0 },
      options,
    )!;
    expect(budget.quota).toBe(100);
    const quotaOf = (c: number) => PROMPT + (c <= 300 ? c : 300 + 3 * (c - 300));
    const tokenQuota = 1_500;
    const run = await stream({
      tokenQuota,
      reserve: PROMPT + budget.quota,
      stepTokens: budget.tokens,
      chunks: 1_000,
      priced: { price: expressionPrice, budget, quotaOf },
    });
    expect(run.cut).toBe(true);
    // Well into the dearer tier: the ratio of the first would have run to 1,450 tokens.
    expect(run.delivered * PIECE_TOKENS).toBeGreaterThan(600);
    expect(run.delivered * PIECE_TOKENS).toBeLessThan(1_450);
    expect(run.guard.reserved).toBeLessThanOrEqual(tokenQuota);
    expect(run.spent).toBeGreaterThanOrEqual(run.guard.reserved);
    expect(run.spent - run.guard.reserved).toBeLessThanOrEqual(3 * PIECE_TOKENS);
    await ledger.settle(run.reservation, run.spent);
    expect(ledger.stats().reservedQuota).toBe(0);
  });
});
