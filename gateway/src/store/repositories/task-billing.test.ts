import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestStore } from '../../../../tests/support/database.ts';
import type { Store } from '../index.ts';
import { LOG_TYPE } from './logs.ts';
import {
  failMidjourneyAndRefund,
  failTaskAndRefund,
  findUserTasks,
  insertMidjourney,
  insertTask,
  succeedTaskAndSettle,
  unfinishedMidjourneys,
  unfinishedTasks,
  updateMidjourneyIf,
  updateTaskIf,
} from './task-billing.ts';

let store: Store;
let dispose: () => Promise<void>;
let ids: { user: number; token: number; unlimited: number; channel: number };

beforeAll(async () => {
  ({ store, dispose } = await createTestStore());
  const db = store.db;
  const user = await db
    .insertInto('users')
    .values({ username: 'drawer', password: 'x', created_at: 1, quota: 1_000, used_quota: 300 })
    .returning('id')
    .executeTakeFirstOrThrow();
  const token = (unlimited: boolean, name: string) =>
    db
      .insertInto('tokens')
      .values({
        user_id: user.id,
        key_hmac: `h-${name}`,
        key_encrypted: 'x',
        name,
        created_time: 1,
        remain_quota: 500,
        used_quota: 300,
        unlimited_quota: unlimited,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
  const channel = await db
    .insertInto('channels')
    .values({ type: 2, name: 'mj', key_encrypted: 'x', created_time: 1, used_quota: 300 })
    .returning('id')
    .executeTakeFirstOrThrow();
  ids = {
    user: user.id,
    token: (await token(false, 'limited')).id,
    unlimited: (await token(true, 'unlimited')).id,
    channel: channel.id,
  };
});
afterAll(() => dispose());

const task = (tokenId: number, mjId: string) =>
  insertMidjourney(store.db, {
    user_id: ids.user,
    token_id: tokenId,
    group: 'default',
    model_name: 'mj_imagine',
    action: 'IMAGINE',
    mj_id: mjId,
    submit_time: Date.now(),
    channel_id: ids.channel,
    status: 'IN_PROGRESS',
    quota: 100,
  });

const balances = async () => {
  const db = store.db;
  const user = await db
    .selectFrom('users')
    .select(['quota', 'used_quota'])
    .where('id', '=', ids.user)
    .executeTakeFirstOrThrow();
  const tokens = await db.selectFrom('tokens').select(['id', 'remain_quota', 'used_quota']).orderBy('id').execute();
  const channel = await db
    .selectFrom('channels')
    .select('used_quota')
    .where('id', '=', ids.channel)
    .executeTakeFirstOrThrow();
  return { user, tokens, channel };
};

describe('task billing', () => {
  it('fails and refunds a task once when several pods try at the same moment', async () => {
    const id = await task(ids.token, 'race-1');
    const before = await balances();
    const input = {
      id,
      previous: 'IN_PROGRESS',
      reason: 'upstream timeout',
      progress: '10%',
      finishTime: 5,
      atSeconds: 7,
    };
    const results = await Promise.all(Array.from({ length: 6 }, () => failMidjourneyAndRefund(store.db, input)));
    expect(results.filter((r) => r !== undefined)).toHaveLength(1);
    expect(results.find((r) => r)?.refunded).toBe(100);
    const after = await balances();
    expect(Number(after.user.quota)).toBe(Number(before.user.quota) + 100);
    expect(Number(after.user.used_quota)).toBe(Number(before.user.used_quota) - 100);
    const limited = after.tokens.find((t) => t.id === ids.token)!;
    expect(Number(limited.remain_quota)).toBe(600);
    expect(Number(limited.used_quota)).toBe(200);
    expect(Number(after.channel.used_quota)).toBe(Number(before.channel.used_quota) - 100);
    const logs = await store.db.selectFrom('logs').selectAll().where('type', '=', LOG_TYPE.refund).execute();
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatchObject({
      quota: 100,
      user_id: ids.user,
      token_id: ids.token,
      model_name: 'mj_imagine',
      created_at: 7,
    });
    expect(JSON.parse(logs[0]!.other)).toEqual({
      task_id: 'race-1',
      reason: 'upstream timeout',
      platform: 'midjourney',
    });
    const row = await store.db.selectFrom('midjourneys').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'FAILURE', fail_reason: 'upstream timeout', progress: '10%' });
  });

  it('gives an unlimited token nothing to its balance, only its used quota back', async () => {
    const id = await task(ids.unlimited, 'unlimited-1');
    await failMidjourneyAndRefund(store.db, {
      id,
      previous: 'IN_PROGRESS',
      reason: 'x',
      progress: '',
      finishTime: 1,
      atSeconds: 1,
    });
    const unlimited = (await balances()).tokens.find((t) => t.id === ids.unlimited)!;
    expect(Number(unlimited.remain_quota)).toBe(500);
    expect(Number(unlimited.used_quota)).toBe(200);
  });

  it('writes a change only while the status is still the one it was read with', async () => {
    const id = await task(ids.token, 'cas-1');
    expect(await updateMidjourneyIf(store.db, id, 'IN_PROGRESS', { status: 'SUCCESS', progress: '100%' })).toBe(true);
    expect(await updateMidjourneyIf(store.db, id, 'IN_PROGRESS', { status: 'IN_PROGRESS', progress: '60%' })).toBe(
      false,
    );
    const failed = await failMidjourneyAndRefund(store.db, {
      id,
      previous: 'IN_PROGRESS',
      reason: 'late',
      progress: '',
      finishTime: 1,
      atSeconds: 1,
    });
    expect(failed).toBeUndefined();
    expect((await unfinishedMidjourneys(store.db, 100)).map((r) => r.mj_id)).not.toContain('cas-1');
  });

  it('fails and refunds a tasks-table task once, logging its public id and priced model', async () => {
    const id = await insertTask(store.db, {
      created_at: 1,
      updated_at: 1,
      task_id: 'task_public',
      platform: 'suno',
      user_id: ids.user,
      token_id: ids.token,
      group: 'default',
      channel_id: ids.channel,
      quota: 40,
      action: 'MUSIC',
      status: 'QUEUED',
      submit_time: 1,
      private_data: JSON.stringify({
        upstream_task_id: 'up-1',
        model_name: 'suno_music',
        upstream_model: 'chirp-v4',
        model_price: 0.1,
        group_ratio: 1,
      }),
    });
    expect((await unfinishedTasks(store.db, 'suno', 10)).map((r) => r.task_id)).toEqual(['task_public']);
    expect(await updateTaskIf(store.db, id, 'SUBMITTED', { status: 'IN_PROGRESS' })).toBe(false);
    const before = await balances();
    const input = { id, previous: 'QUEUED', reason: 'upstream timeout', atSeconds: 9 };
    const results = await Promise.all(Array.from({ length: 4 }, () => failTaskAndRefund(store.db, input)));
    expect(results.filter((r) => r !== undefined).map((r) => r?.refunded)).toEqual([40]);
    const after = await balances();
    expect(Number(after.user.quota)).toBe(Number(before.user.quota) + 40);
    expect(Number(after.channel.used_quota)).toBe(Number(before.channel.used_quota) - 40);
    const log = await store.db
      .selectFrom('logs')
      .selectAll()
      .where('type', '=', LOG_TYPE.refund)
      .where('model_name', '=', 'suno_music')
      .executeTakeFirstOrThrow();
    expect(log).toMatchObject({ quota: 40, token_id: ids.token, created_at: 9 });
    expect(JSON.parse(log.other)).toEqual({ task_id: 'task_public', reason: 'upstream timeout', platform: 'suno' });
    const [row] = await findUserTasks(store.db, 'suno', ids.user, ['task_public']);
    expect(row).toMatchObject({ status: 'FAILURE', fail_reason: 'upstream timeout', finish_time: 9 });
    expect(await findUserTasks(store.db, 'suno', ids.user + 1, ['task_public'])).toEqual([]);
    expect(await unfinishedTasks(store.db, 'suno', 10)).toEqual([]);
  });

  it('settles a finished task to what it used once, the difference logged with its id and the books moved', async () => {
    const videoTask = (taskId: string) =>
      insertTask(store.db, {
        created_at: 1,
        updated_at: 1,
        task_id: taskId,
        platform: 'video',
        user_id: ids.user,
        token_id: ids.token,
        group: 'default',
        channel_id: ids.channel,
        quota: 50,
        action: 'GENERATE',
        status: 'IN_PROGRESS',
        submit_time: 1,
        private_data: JSON.stringify({
          upstream_task_id: 'up',
          model_name: 'seedance',
          model_price: -1,
          group_ratio: 1,
        }),
      });
    for (const [taskId, actual, type] of [
      ['video_more', 80, LOG_TYPE.consume],
      ['video_less', 20, LOG_TYPE.refund],
    ] as const) {
      const id = await videoTask(taskId);
      const before = await balances();
      const input = {
        id,
        previous: 'IN_PROGRESS',
        changes: { progress: '100%', finish_time: 3 },
        settlement: { actual, reason: 'tokens=1', other: { total_tokens: 1 } },
        atSeconds: 3,
      };
      const results = await Promise.all(Array.from({ length: 4 }, () => succeedTaskAndSettle(store.db, input)));
      expect(results.filter((r) => r !== undefined)).toEqual([{ delta: actual - 50 }]);
      const after = await balances();
      const delta = actual - 50;
      expect(Number(after.user.quota)).toBe(Number(before.user.quota) - delta);
      expect(Number(after.user.used_quota)).toBe(Number(before.user.used_quota) + delta);
      const token = (b: typeof before) => b.tokens.find((t) => t.id === ids.token)!;
      expect(Number(token(after).remain_quota)).toBe(Number(token(before).remain_quota) - delta);
      expect(Number(token(after).used_quota)).toBe(Number(token(before).used_quota) + delta);
      expect(Number(after.channel.used_quota)).toBe(Number(before.channel.used_quota) + delta);
      const logs = await store.db.selectFrom('logs').selectAll().where('other', 'like', `%${taskId}%`).execute();
      expect(logs).toHaveLength(1);
      expect(logs[0]).toMatchObject({ type, quota: Math.abs(delta), model_name: 'seedance', created_at: 3 });
      expect(JSON.parse(logs[0]!.other)).toEqual({
        task_id: taskId,
        total_tokens: 1,
        pre_consumed_quota: 50,
        actual_quota: actual,
        platform: 'video',
      });
      const [row] = await findUserTasks(store.db, 'video', ids.user, [taskId]);
      expect(row).toMatchObject({ status: 'SUCCESS', progress: '100%', quota: actual });
    }
  });
});
