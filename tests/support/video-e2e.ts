import pg from 'pg';
import { afterAll, expect } from 'vitest';
import { type DashboardClient, setupRoot } from './client.ts';
import { createTestDatabase } from './database.ts';
import { type GatewayProcess, gatewayEnv, spawnGateway, testNamespace } from './gateway.ts';
import { eventually } from './wait.ts';

/**
 * What the video task e2e tests (tests/e2e/video*.test.ts) share: one gateway that polls tasks fast
 * on a fresh database, a task's logs, its status through the generic video API, its content, and
 * the books at the end. Each test keeps its own vendors, prices and assertions.
 */

export type Cleanups = Array<() => Promise<void>>;

/** Where a test file registers what it starts; run last-first once all its tests are done. */
export function cleanupsAfterAll(): Cleanups {
  const cleanups: Cleanups = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });
  return cleanups;
}

export interface VideoGateway {
  gateway: GatewayProcess;
  db: pg.Client;
  root: DashboardClient;
}

/** A gateway on a fresh database, polling tasks every 150 ms; what it started is pushed onto `cleanups`. */
export async function startVideoGateway(cleanups: Cleanups): Promise<VideoGateway> {
  const database = await createTestDatabase();
  cleanups.push(database.drop);
  const db = new pg.Client({ connectionString: database.url });
  await db.connect();
  cleanups.push(() => db.end());
  const gateway = await spawnGateway(
    gatewayEnv(database.options, testNamespace(), { TASK_POLL_INTERVAL_MS: '150', TASK_TIMEOUT_SECONDS: '30' }),
  );
  cleanups.push(async () => {
    if (gateway.child.exitCode === null && gateway.child.signalCode === null) await gateway.stop('SIGKILL');
  });
  return { gateway, db, root: await setupRoot(gateway.url) };
}

/** The finished videos' addresses point at a mock on 127.0.0.1 (random port): the outbound guard must allow it. */
export const ALLOW_MOCK_DOWNLOADS = { 'fetch_setting.allow_private_ip': true, 'fetch_setting.allowed_ports': [] };

/** Saves each option (its value as JSON), each save checked. */
export async function putOptions(root: DashboardClient, options: Record<string, unknown>): Promise<void> {
  for (const [key, value] of Object.entries(options)) {
    const saved = await root.put('/api/option/', { key, value: JSON.stringify(value) });
    expect(saved.body.success, JSON.stringify(saved.body)).toBe(true);
  }
}

/** The user's wallet and the token's remaining quota, to check the books against at the end. */
export async function balanceOf(db: pg.Client, tokenName: string): Promise<{ wallet: number; token: number }> {
  const { rows } = await db.query(
    'select u.quota as wallet, t.remain_quota as token from tokens t join users u on u.id = t.user_id where t.name = $1',
    [tokenName],
  );
  return { wallet: Number(rows[0].wallet), token: Number(rows[0].token) };
}

/** A task's logs of one type (2 consume, 6 refund), oldest first. */
export async function logsOfTask(db: pg.Client, type: number, id: string) {
  const { rows } = await db.query('select * from logs where type = $1 and other like $2 order by id', [
    type,
    `%"task_id":"${id}"%`,
  ]);
  return rows.map((row) => ({ ...row, quota: Number(row.quota), other: JSON.parse(row.other) })) as Array<
    Record<string, any>
  >;
}

/** The task's logs of this type once written (consume logs are recorded in batches). */
export const loggedOnce = (db: pg.Client, type: number, id: string) =>
  eventually(
    () => logsOfTask(db, type, id),
    (rows) => rows.length > 0,
    5000,
  );

/** The generic video API's view of a task (`GET /v1/video/generations/{id}`), once its status is `status`. */
export const genericStatus = (gatewayUrl: string, key: string, id: string, status: string) =>
  eventually(
    async () => {
      const answer = await fetch(`${gatewayUrl}/v1/video/generations/${id}`, {
        headers: { authorization: `Bearer ${key}` },
      });
      const text = await answer.text();
      try {
        return JSON.parse(text) as Record<string, any>;
      } catch {
        return undefined;
      }
    },
    (body) => body?.data?.status === status,
    10_000,
  ) as Promise<Record<string, any>>;

/** A finished video's bytes through the content route, checked to be an MP4 served to its owner. */
export async function downloaded(gatewayUrl: string, key: string, id: string): Promise<Buffer> {
  const response = await fetch(`${gatewayUrl}/v1/videos/${id}/content`, {
    headers: { authorization: `Bearer ${key}` },
  });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('video/mp4');
  return Buffer.from(await response.arrayBuffer());
}

/**
 * The books once the gateway has stopped: what was charged net of refunds is the token's, the user's
 * and the channels' used quota, and what left the token and the wallet since `initial`. Returns the
 * sums charged (type-2 logs) and refunded (type-6) for the test to check against its prices.
 */
export async function expectBooksBalanced(
  db: pg.Client,
  tokenName: string,
  initial: { wallet: number; token: number },
): Promise<{ charged: number; refunded: number }> {
  const q = async (text: string, values: unknown[] = []) =>
    (await db.query(text, values)).rows[0] as Record<string, any>;
  const charged = Number((await q('select coalesce(sum(quota),0) as s from logs where type = 2')).s);
  const refunded = Number((await q('select coalesce(sum(quota),0) as s from logs where type = 6')).s);
  const net = charged - refunded;
  const token = await q('select remain_quota, used_quota from tokens where name = $1', [tokenName]);
  const user = await q(
    'select u.quota, u.used_quota from users u join tokens t on t.user_id = u.id where t.name = $1',
    [tokenName],
  );
  const channels = await q('select sum(used_quota) as used from channels');
  expect(Number(token.used_quota)).toBe(net);
  expect(Number(user.used_quota)).toBe(net);
  expect(Number(channels.used)).toBe(net);
  expect(Number(token.remain_quota) + net).toBe(initial.token);
  expect(Number(user.quota) + net).toBe(initial.wallet);
  return { charged, refunded };
}
