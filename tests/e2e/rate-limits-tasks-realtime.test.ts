import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { loadConfig } from '../../gateway/src/config.ts';
import { type Gateway, startGateway } from '../../gateway/src/gateway.ts';
import { type DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase, hasPostgres } from '../support/database.ts';
import { gatewayEnv, hasRedis, testNamespace } from '../support/gateway.ts';
import { type MockMidjourney, startMockMidjourney } from '../support/mock-midjourney.ts';
import { type MockRealtime, realtimeUsage, startMockRealtime } from '../support/mock-realtime.ts';
import { type MockSora, startMockSora } from '../support/mock-sora.ts';
import { type MockSuno, startMockSuno } from '../support/mock-suno.ts';
import { eventually, waitFor } from '../support/wait.ts';

/**
 * The rate limits on the routes outside the relay pipeline (issue 17): Midjourney, Suno and video
 * submissions count one request each for RPM, refused 429 in the route's own error shape with
 * `Retry-After` before anything is held, sent or charged; a Realtime session's opening counts one
 * request (refused at the handshake), each of its turns one more and its tokens for TPM (a refused
 * turn gets an `error` event and never reaches the upstream). Real Postgres and Redis; the limits'
 * clock is injected, so a test moves past a minute without waiting for one. The books balance at the end.
 */

/** ModelPrice 0.1 USD × 500,000 quota per USD × group ratio 1: every task submission is charged 50,000. */
const PER_TASK = 50_000;
const REALTIME_KEY = 'sk-realtime-upstream';

let clock = 2_000_000_000;
const nextMinute = () => {
  clock += 61_000;
};
let gateway: Gateway;
let db: pg.Client;
let drop: () => Promise<void>;
let root: DashboardClient;
let mj: MockMidjourney;
let suno: MockSuno;
let sora: MockSora;
let realtime: MockRealtime;

beforeAll(async () => {
  [mj, suno, sora, realtime] = await Promise.all([
    startMockMidjourney('mj-secret'),
    startMockSuno('suno-secret'),
    startMockSora('sora-secret'),
    startMockRealtime([REALTIME_KEY]),
  ]);
  const database = await createTestDatabase();
  drop = database.drop;
  db = new pg.Client({ connectionString: database.url });
  await db.connect();
  const env = gatewayEnv(database.options, testNamespace(), { CRITICAL_RATE_LIMIT_ENABLE: 'false' });
  gateway = await startGateway(loadConfig(env, 'test'), pino({ level: 'silent' }), { rateLimitClock: () => clock });
  root = await setupRoot(gateway.url);
  const channels = [
    { name: 'mj', type: 2, key: mj.secret, base_url: mj.url, models: 'mj_imagine' },
    { name: 'suno', type: 36, key: suno.key, base_url: suno.url, models: 'suno_music' },
    { name: 'sora', type: 55, key: sora.key, base_url: sora.url, models: 'sora-2' },
    { name: 'realtime', type: 1, key: REALTIME_KEY, base_url: realtime.url, models: 'gpt-realtime' },
  ];
  for (const channel of channels) {
    const created = await root.post('/api/channel/', channel);
    expect(created.body.success, JSON.stringify(created.body)).toBe(true);
  }
  await gateway.options.setMany({
    GroupRatio: JSON.stringify({ default: 1 }),
    ModelPrice: JSON.stringify({ mj_imagine: 0.1, suno_music: 0.1, 'sora-2': 0.1 }),
    ModelRatio: JSON.stringify({ 'gpt-realtime': 2.5 }),
  });
  const { key: lister } = await limitedToken({});
  await eventually(
    async () => {
      const answer = await fetch(`${gateway.url}/v1/models`, { headers: { authorization: `Bearer ${lister}` } });
      return ((await answer.json()) as { data?: unknown[] }).data?.length ?? 0;
    },
    (count) => count === 4,
    5000,
  );
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await db?.end();
  await drop?.();
  await Promise.all([mj?.close(), suno?.close(), sora?.close(), realtime?.close()]);
});

/** A token of root's with these limits and quota of its own (so that a charge shows on it). */
async function limitedToken(
  rateLimits: Record<string, { rpm?: number; tpm?: number }>,
): Promise<{ key: string; id: number }> {
  const created = await root.post('/api/token/', {
    name: 'limited',
    remain_quota: 5_000_000,
    unlimited_quota: false,
    rate_limits: rateLimits,
  });
  expect(created.body.success, JSON.stringify(created.body)).toBe(true);
  return { key: created.body.data.key as string, id: created.body.data.id as number };
}

/** What a token was charged: its used quota, and the sum and number of its consume logs. */
async function tokenBooks(tokenId: number): Promise<{ used: number; logged: number; logs: number }> {
  const { rows } = await db.query<{ used: string; logged: string; logs: string }>(
    `select (select used_quota from tokens where id = $1) as used,
            (select coalesce(sum(quota), 0) from logs where type = 2 and token_id = $1) as logged,
            (select count(*) from logs where type = 2 and token_id = $1) as logs`,
    [tokenId],
  );
  const row = rows[0]!;
  return { used: Number(row.used), logged: Number(row.logged), logs: Number(row.logs) };
}

interface Answer {
  status: number;
  retryAfter: string | null;
  body: any;
}

async function post(path: string, key: string, body: unknown): Promise<Answer> {
  const response = await fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'accept-language': 'en' },
    body: JSON.stringify(body),
  });
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body: await response.json() };
}

const submissions = [
  {
    platform: 'Midjourney',
    price: PER_TASK,
    submit: (key: string) => post('/mj/submit/imagine', key, { prompt: 'a lighthouse' }),
    sent: () => mj.requests.filter((r) => r.path === '/mj/submit/imagine').length,
    // midjourney-proxy's shape: the failure code 4 and the message in `description`.
    refusal: { code: 4, description: expect.stringContaining('at most 2 requests per minute'), type: 'new_api_error' },
  },
  {
    platform: 'Suno',
    price: PER_TASK,
    submit: (key: string) => post('/suno/submit/music', key, { prompt: 'harbour lights', mv: 'chirp-v4' }),
    sent: () => suno.requests.filter((r) => r.path === '/suno/submit/music').length,
    refusal: { code: 'rate_limit_exceeded', message: expect.stringContaining('at most 2 requests'), data: null },
  },
  {
    platform: 'video',
    // Sora's seconds are a ratio of the price.
    price: 4 * PER_TASK,
    submit: (key: string) => post('/v1/videos', key, { model: 'sora-2', prompt: 'a lighthouse at dusk', seconds: '4' }),
    sent: () => sora.requests.filter((r) => r.method === 'POST' && r.path === '/v1/videos').length,
    refusal: { error: { code: 'rate_limit_exceeded', type: 'new_api_error' } },
  },
];

describe.skipIf(!hasPostgres() || !hasRedis())('rate limits on task submissions', () => {
  it.each(submissions)(
    'refuses the third $platform submission of a token with RPM 2: 429, Retry-After, nothing charged or sent',
    async ({ submit, sent, refusal, price }) => {
      const { key, id } = await limitedToken({ '*': { rpm: 2 } });
      const before = sent();
      const first = clock;
      expect((await submit(key)).status).toBe(200);
      clock += 15_000;
      expect((await submit(key)).status).toBe(200);
      const charged = await tokenBooks(id);
      expect(charged).toEqual({ used: 2 * price, logged: 2 * price, logs: 2 });

      const refused = await submit(key);
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject(refusal);
      // The first submission leaves the minute 60 s after it was admitted: 45 s from now.
      expect(refused.retryAfter).toBe('45');
      expect(sent() - before).toBe(2);
      expect(await tokenBooks(id)).toEqual(charged);

      clock = first + 60_001;
      expect((await submit(key)).status).toBe(200);
      expect(sent() - before).toBe(3);
      expect(await tokenBooks(id)).toEqual({ used: 3 * price, logged: 3 * price, logs: 3 });
    },
  );

  it('counts no tokens for a task: a token with a TPM limit alone submits freely', async () => {
    const { key } = await limitedToken({ '*': { tpm: 1 } });
    for (let i = 0; i < 3; i++) expect((await submissions[1]!.submit(key)).status).toBe(200);
  });
});

/** A Realtime session of the plain `ws` client: every server event, and a way to wait for the next one of a type. */
async function openSession(key: string) {
  const socket = new WebSocket(`${gateway.url.replace(/^http/, 'ws')}/v1/realtime?model=gpt-realtime`, {
    headers: { authorization: `Bearer ${key}`, 'accept-language': 'en' },
  });
  const events: any[] = [];
  socket.on('message', (data) => events.push(JSON.parse(data.toString())));
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  const next = async (type: string) => {
    const seen = events.filter((e) => e.type === type).length;
    await waitFor(() => events.filter((e) => e.type === type).length > seen, 5000);
    return events.filter((e) => e.type === type)[seen];
  };
  const turn = (maxOutputTokens?: number) =>
    socket.send(
      JSON.stringify({
        type: 'response.create',
        response: { output_modalities: ['text'], ...(maxOutputTokens ? { max_output_tokens: maxOutputTokens } : {}) },
      }),
    );
  const close = async () => {
    socket.close();
    await closed;
  };
  return { events, next, turn, close };
}

/** The handshake's refusal: its HTTP status, Retry-After and body. */
function refusedHandshake(key: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${gateway.url.replace(/^http/, 'ws')}/v1/realtime?model=gpt-realtime`, {
      headers: { authorization: `Bearer ${key}`, 'accept-language': 'en' },
    });
    socket.on('open', () => reject(new Error('the handshake was accepted')));
    socket.on('error', () => {});
    socket.on('unexpected-response', (_request, response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          retryAfter: String(response.headers['retry-after'] ?? '') || null,
          body: JSON.parse(Buffer.concat(chunks).toString()),
        }),
      );
    });
  });
}

/** The `response.create` events the upstream received, over every session. */
const upstreamTurns = () =>
  realtime.connections.flatMap((c) => c.events).filter((e) => e.type === 'response.create').length;

describe.skipIf(!hasPostgres() || !hasRedis())('rate limits on Realtime sessions', () => {
  it('counts the opening as a request: past RPM the handshake is refused 429 with Retry-After, and so is a turn', async () => {
    nextMinute();
    const { key } = await limitedToken({ '*': { rpm: 3 } });
    const first = clock;
    const session = await openSession(key);
    const turnsBefore = upstreamTurns();
    session.turn();
    await session.next('response.done');
    clock += 10_000;
    const second = await openSession(key);

    const refused = await refusedHandshake(key);
    expect(refused.status).toBe(429);
    expect(refused.retryAfter).toBe('50');
    expect(refused.body.error).toMatchObject({ code: 'rate_limit_exceeded', type: 'new_api_error' });
    expect(refused.body.error.message).toContain('at most 3 requests per minute');

    // A turn is a request too: refused with an error event in OpenAI's shape, not passed on, the session open.
    second.turn();
    const error = await second.next('error');
    expect(error.error).toMatchObject({ type: 'requests', code: 'rate_limit_exceeded' });
    expect(upstreamTurns() - turnsBefore).toBe(1);

    clock = first + 60_001;
    second.turn();
    await second.next('response.done');
    expect(upstreamTurns() - turnsBefore).toBe(2);
    await Promise.all([session.close(), second.close()]);
  });

  it('counts a turn’s tokens for TPM: admitted by its estimate, corrected by its usage, refused with an error event', async () => {
    nextMinute();
    const { key, id } = await limitedToken({ '*': { tpm: 500 } });
    const session = await openSession(key);
    const turnsBefore = upstreamTurns();
    // Turn 1: estimated at its output budget (no prompt yet), 100; it uses 300 + 100.
    realtime.usages.push(realtimeUsage({ textIn: 300, audioIn: 0, textOut: 100, audioOut: 0 }));
    session.turn(100);
    await session.next('response.done');
    // Turn 2: the last prompt, 300, plus its budget, 100: 400 more does not fit in what is left (100).
    session.turn(100);
    const error = await session.next('error');
    expect(error.error).toMatchObject({ type: 'tokens', code: 'tpm_limit_exceeded' });
    expect(error.error.message).toContain('at most 500 tokens per minute');
    expect(upstreamTurns() - turnsBefore).toBe(1);
    // A response the upstream starts by itself (server VAD) is admitted at its start: 300 + the model's
    // completion budget (2048) does not fit either, so the client is told and the upstream asked to cancel it.
    realtime.push(
      JSON.stringify({ type: 'response.created', response: { id: 'resp_vad', status: 'in_progress' } }),
      false,
    );
    const vad = await session.next('error');
    expect(vad.error).toMatchObject({ type: 'tokens', code: 'tpm_limit_exceeded' });
    await waitFor(
      () =>
        realtime.connections.at(-1)!.events.some((e) => e.type === 'response.cancel' && e.response_id === 'resp_vad'),
      5000,
    );
    // The upstream ends it cancelled, its prompt billed.
    const cancelled = realtimeUsage({ textIn: 300, audioIn: 0, textOut: 0, audioOut: 0 });
    realtime.push(
      JSON.stringify({ type: 'response.done', response: { id: 'resp_vad', status: 'cancelled', usage: cancelled } }),
      false,
    );
    await session.next('response.done');

    // A new minute: 300 + 150 estimated, 10 + 10 used.
    nextMinute();
    realtime.usages.push(realtimeUsage({ textIn: 10, audioIn: 0, textOut: 10, audioOut: 0 }));
    session.turn(150);
    await session.next('response.done');
    // 20 counted, not 450: the next turn's 10 + 150 fits only because the estimate was corrected.
    realtime.usages.push(realtimeUsage({ textIn: 10, audioIn: 0, textOut: 10, audioOut: 0 }));
    session.turn(150);
    await session.next('response.done');
    expect(upstreamTurns() - turnsBefore).toBe(3);
    await session.close();

    // The session's one consume log carries the four responses it was billed for.
    const books = await eventually(
      async () => tokenBooks(id),
      (seen) => seen.logs === 1,
      5000,
    );
    expect(books.used).toBe(books.logged);
    const { rows } = await db.query(
      'select prompt_tokens, completion_tokens from logs where type = 2 and token_id = $1',
      [id],
    );
    expect(rows[0]).toEqual({ prompt_tokens: 620, completion_tokens: 120 });
  });
});

describe.skipIf(!hasPostgres() || !hasRedis())('the books after the refusals', () => {
  it('balance: consume logs, users, tokens and channels agree to the unit', async () => {
    await gateway.stop();
    const { rows } = await db.query<Record<string, string>>(
      `select (select coalesce(sum(quota), 0) from logs where type = 2) as logged,
              (select coalesce(sum(used_quota), 0) from users) as users,
              (select coalesce(sum(used_quota), 0) from tokens) as tokens,
              (select coalesce(sum(used_quota), 0) from channels) as channels`,
    );
    const books = Object.fromEntries(Object.entries(rows[0]!).map(([k, v]) => [k, Number(v)]));
    expect(books.logged).toBeGreaterThan(0);
    expect(books).toEqual({ logged: books.logged, users: books.logged, tokens: books.logged, channels: books.logged });
  });
});
