import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskService } from '../../gateway/src/domain/tasks/index.ts';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { clientsFrom, type DashboardClient, refusalOf, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';

let gateway: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;
let alice: DashboardClient;
let bob: DashboardClient;
const { client, user } = clientsFrom(() => gateway.url, '10.4.0');
const db = () => gateway.store.db;

/** Drawing tasks keep milliseconds, creative tasks seconds: the same instant in both units. */
const S0 = 1_700_000_000;
const M0 = S0 * 1000;

interface Seeded {
  id: number;
  user_id: number;
  channel_id: number;
  submit_time: number;
  key: string;
  platform?: string;
  action: string;
  status: string;
}
let mj: Seeded[] = [];
let tasks: Seeded[] = [];

const newest = (a: Seeded, b: Seeded) => b.submit_time - a.submit_time || b.id - a.id;
const ids = (items: Array<{ id: number }>) => items.map((i) => i.id);
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
  const owners = [alice.userId!, bob.userId!, root.userId!];

  const mjRows = Array.from({ length: 24 }, (_, i) => ({
    user_id: owners[i % 3]!,
    channel_id: [3, 4][Math.floor(i / 3) % 2]!,
    mj_id: `mj-${i}`,
    action: ['IMAGINE', 'UPSCALE'][i % 2]!,
    status: ['SUCCESS', 'FAILURE', 'IN_PROGRESS'][i % 3]!,
    progress: '100%',
    prompt: `a cat ${i}`,
    image_url: `https://img.example/${i}.png`,
    submit_time: M0 + Math.floor(i / 2) * 60_000, // pairs share a submit time: ties go by id
    quota: 1000 + i,
  }));
  const mjIds = await db().insertInto('midjourneys').values(mjRows).returning('id').execute();
  mj = mjRows.map((r, i) => ({ ...r, id: mjIds[i]!.id, key: r.mj_id }));

  const taskRows = Array.from({ length: 24 }, (_, i) => ({
    user_id: owners[i % 3]!,
    channel_id: [5, 6][Math.floor(i / 3) % 2]!,
    task_id: `task-${i}`,
    platform: ['suno', 'kling'][Math.floor(i / 4) % 2]!,
    action: ['MUSIC', 'LYRICS'][i % 2]!,
    status: ['SUCCESS', 'FAILURE', 'QUEUED'][i % 3]!,
    progress: '100%',
    submit_time: S0 + Math.floor(i / 2) * 60,
    created_at: S0 + Math.floor(i / 2) * 60,
    updated_at: S0 + Math.floor(i / 2) * 60,
    quota: 2000 + i,
    properties: JSON.stringify({ input: `song ${i}` }),
    data: JSON.stringify({ clips: [i] }),
    private_data: JSON.stringify({ billing: 'secret-billing-context', model_price: 0.1 }),
  }));
  const taskIds = await db().insertInto('tasks').values(taskRows).returning('id').execute();
  tasks = taskRows.map((r, i) => ({ ...r, id: taskIds[i]!.id, key: r.task_id }));
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
});

describe('GET /api/mj/ and /api/mj/self/ (drawing log, milliseconds)', () => {
  type MjFilter = { channel_id?: number; mj_id?: string; start_timestamp?: number; end_timestamp?: number };
  const expected = (f: MjFilter, ownerId?: number) =>
    mj
      .filter(
        (t) =>
          (ownerId === undefined || t.user_id === ownerId) &&
          (ownerId !== undefined || !f.channel_id || t.channel_id === f.channel_id) &&
          (!f.mj_id || t.key === f.mj_id) &&
          (!f.start_timestamp || t.submit_time >= f.start_timestamp) &&
          (!f.end_timestamp || t.submit_time <= f.end_timestamp),
      )
      .sort(newest);

  const filters: MjFilter[] = [
    {},
    { channel_id: 3 },
    { mj_id: 'mj-7' },
    { start_timestamp: M0 + 5 * 60_000 },
    { end_timestamp: M0 + 3 * 60_000 },
    { channel_id: 4, start_timestamp: M0 + 2 * 60_000, end_timestamp: M0 + 9 * 60_000 },
    { mj_id: 'nope' },
  ];

  it.each(filters)('administrators: %j', async (filter) => {
    const answer = await root.get(`/api/mj/?${qs({ ...filter, page_size: 100 })}`);
    const want = expected(filter);
    expect(answer.body.data).toMatchObject({ total: want.length, page: 1, page_size: 100, total_estimated: false });
    expect(ids(answer.body.data.items)).toEqual(ids(want));
  });

  it.each([...filters, { channel_id: 4 }])('users see only their own: %j', async (filter) => {
    for (const url of ['/api/mj/self', '/api/mj/self/']) {
      const answer = await alice.get(`${url}?${qs({ ...filter, page_size: 100 })}`);
      const want = expected(filter, alice.userId);
      expect(answer.body.data.total).toBe(want.length);
      expect(ids(answer.body.data.items)).toEqual(ids(want));
    }
  });

  it('reads the timestamps as milliseconds: the same instant in seconds matches nothing', async () => {
    const cut = M0 + 3 * 60_000;
    expect((await root.get(`/api/mj/?end_timestamp=${cut}`)).body.data.total).toBe(8);
    expect((await root.get(`/api/mj/?end_timestamp=${cut / 1000}`)).body.data.total).toBe(0);
    expect((await root.get(`/api/mj/?start_timestamp=${cut / 1000}`)).body.data.total).toBe(mj.length);
  });

  it('answers the drawing fields; administrators also get the owner name', async () => {
    const item = (await root.get(`/api/mj/?mj_id=mj-4`)).body.data.items[0];
    expect(item).toMatchObject({
      mj_id: 'mj-4',
      action: 'IMAGINE',
      status: 'FAILURE',
      progress: '100%',
      prompt: 'a cat 4',
      // MjForwardUrlEnabled (on by default): the image through this gateway, as relay clients see it.
      image_url: 'http://localhost:3000/mj/image/mj-4',
      submit_time: M0 + 2 * 60_000,
      channel_id: 4,
      username: 'bob',
    });
    const own = (await bob.get(`/api/mj/self/?mj_id=mj-4`)).body.data.items[0];
    expect(own).toMatchObject({ mj_id: 'mj-4', user_id: bob.userId });
    expect(own).not.toHaveProperty('username');
  });

  it("answers the upstream's image URL when forwarding is off, the gateway's ServerAddress when on", async () => {
    const image = async () => (await root.get(`/api/mj/?mj_id=mj-4`)).body.data.items[0].image_url;
    try {
      expect((await root.put('/api/option/', { key: 'MjForwardUrlEnabled', value: 'false' })).body.success).toBe(true);
      expect(await image()).toBe('https://img.example/4.png');
      expect((await root.put('/api/option/', { key: 'MjForwardUrlEnabled', value: 'true' })).body.success).toBe(true);
      expect(
        (await root.put('/api/option/', { key: 'ServerAddress', value: 'https://gw.example/' })).body.success,
      ).toBe(true);
      expect(await image()).toBe('https://gw.example/mj/image/mj-4');
    } finally {
      await root.put('/api/option/', { key: 'MjForwardUrlEnabled', value: 'true' });
      await root.put('/api/option/', { key: 'ServerAddress', value: 'http://localhost:3000' });
    }
  });

  it('pages', async () => {
    const answer = await root.get('/api/mj/?p=2&page_size=5');
    expect(answer.body.data).toMatchObject({ page: 2, page_size: 5, total: mj.length });
    expect(ids(answer.body.data.items)).toEqual(ids([...mj].sort(newest).slice(5, 10)));
  });

  it('is for administrators; users get the self route', async () => {
    expect(refusalOf(await alice.get('/api/mj/'))).toMatchObject({ status: 200, success: false });
    expect((await client().get('/api/mj/self')).status).toBe(401);
    expect((await root.get('/api/mj/?start_timestamp=soon')).body).toMatchObject({ code: 'INVALID_REQUEST' });
  });
});

describe('GET /api/task/ and /api/task/self (creative tasks, seconds)', () => {
  type TaskFilter = {
    channel_id?: number;
    task_id?: string;
    platform?: string;
    action?: string;
    status?: string;
    start_timestamp?: number;
    end_timestamp?: number;
  };
  const expected = (f: TaskFilter, ownerId?: number) =>
    tasks
      .filter(
        (t) =>
          (ownerId === undefined || t.user_id === ownerId) &&
          (ownerId !== undefined || !f.channel_id || t.channel_id === f.channel_id) &&
          (!f.task_id || t.key === f.task_id) &&
          (!f.platform || t.platform === f.platform) &&
          (!f.action || t.action === f.action) &&
          (!f.status || t.status === f.status) &&
          (!f.start_timestamp || t.submit_time >= f.start_timestamp) &&
          (!f.end_timestamp || t.submit_time <= f.end_timestamp),
      )
      .sort(newest);

  const filters: TaskFilter[] = [
    {},
    { channel_id: 6 },
    { task_id: 'task-11' },
    { platform: 'kling' },
    { action: 'LYRICS', status: 'SUCCESS' },
    { start_timestamp: S0 + 4 * 60 },
    { end_timestamp: S0 + 6 * 60 },
    { channel_id: 5, platform: 'suno', start_timestamp: S0 + 60, end_timestamp: S0 + 10 * 60 },
  ];

  it.each(filters)('administrators: %j', async (filter) => {
    const answer = await root.get(`/api/task/?${qs({ ...filter, page_size: 100 })}`);
    const want = expected(filter);
    expect(answer.body.data).toMatchObject({ total: want.length, page: 1, page_size: 100 });
    expect(ids(answer.body.data.items)).toEqual(ids(want));
  });

  it.each([...filters, { channel_id: 5 }])('users see only their own: %j', async (filter) => {
    for (const url of ['/api/task/self', '/api/task/self/']) {
      const answer = await bob.get(`${url}?${qs({ ...filter, page_size: 100 })}`);
      const want = expected(filter, bob.userId);
      expect(answer.body.data.total).toBe(want.length);
      expect(ids(answer.body.data.items)).toEqual(ids(want));
    }
  });

  it('reads the timestamps as seconds: the same instant in milliseconds matches nothing', async () => {
    const cut = S0 + 3 * 60;
    expect((await root.get(`/api/task/?end_timestamp=${cut}`)).body.data.total).toBe(8);
    expect((await root.get(`/api/task/?start_timestamp=${cut * 1000}`)).body.data.total).toBe(0);
    expect((await root.get(`/api/task/?end_timestamp=${cut * 1000}`)).body.data.total).toBe(tasks.length);
  });

  it('never answers private_data, to anyone', async () => {
    const everything = [
      await root.get('/api/task/?page_size=100'),
      await alice.get('/api/task/self?page_size=100'),
      await bob.get('/api/task/self/?page_size=100'),
    ];
    for (const answer of everything) {
      expect(answer.body.data.items.length).toBeGreaterThan(0);
      for (const item of answer.body.data.items) expect(item).not.toHaveProperty('private_data');
      expect(JSON.stringify(answer.body)).not.toContain('secret-billing-context');
    }
    const view = new TaskService({ db: db() });
    const one = await view.getTask(tasks[0]!.id, { id: 1, role: 100 });
    expect(one).not.toHaveProperty('private_data');
  });

  it('answers properties and data as JSON, and the owner name to administrators', async () => {
    const item = (await root.get('/api/task/?task_id=task-2')).body.data.items[0];
    expect(item).toMatchObject({
      task_id: 'task-2',
      platform: 'suno',
      action: 'MUSIC',
      status: 'QUEUED',
      submit_time: S0 + 60,
      channel_id: 5,
      properties: { input: 'song 2' },
      data: { clips: [2] },
      username: 'root',
    });
    const own = (await alice.get('/api/task/self?task_id=task-0')).body.data.items[0];
    expect(own).toMatchObject({ task_id: 'task-0', user_id: alice.userId, data: { clips: [0] } });
    expect(own).not.toHaveProperty('username');
    expect((await alice.get('/api/task/self?task_id=task-1')).body.data).toMatchObject({ items: [], total: 0 });
  });

  it('is for administrators; users get the self route', async () => {
    expect(refusalOf(await bob.get('/api/task/'))).toMatchObject({ status: 200, success: false });
    expect((await client().get('/api/task/self')).status).toBe(401);
  });
});

describe('the generic lists (for /rest)', () => {
  const service = () => new TaskService({ db: db() });
  const admin = { id: 1, role: 100 };

  it('sorts by a whitelisted field, pages, and refuses other fields', async () => {
    const result = await service().listTasks(
      { filters: {}, sort: { field: 'quota', order: 'ASC' }, offset: 3, limit: 4 },
      admin,
    );
    expect(ids(result.items)).toEqual(ids([...tasks].sort((a, b) => a.id - b.id).slice(3, 7)));
    expect(result.total).toBe(tasks.length);
    await expect(
      service().listMidjourney({ filters: {}, sort: { field: 'prompt', order: 'asc' }, offset: 0, limit: 5 }, admin),
    ).rejects.toMatchObject({ code: 'SORT_FIELD_UNSUPPORTED' });
  });

  it('ignores administrator-only filters from users (user id, channel)', async () => {
    const asAlice = { id: alice.userId!, role: 1 };
    const own = (rows: Seeded[]) => ids(rows.filter((t) => t.user_id === alice.userId).sort(newest));
    const drawings = await service().listMidjourney(
      { filters: { user_id: bob.userId!, channel_id: 3 }, offset: 0, limit: 100 },
      asAlice,
    );
    expect(ids(drawings.items)).toEqual(own(mj));
    const creative = await service().listTasks(
      { filters: { user_id: bob.userId!, channel_id: 5 }, offset: 0, limit: 100 },
      asAlice,
    );
    expect(ids(creative.items)).toEqual(own(tasks));
  });

  it('keeps users to their own tasks, by id too', async () => {
    const bobs = mj.filter((t) => t.user_id === bob.userId);
    const asAlice = { id: alice.userId!, role: 1 };
    const listed = await service().listMidjourney({ filters: { id: ids(bobs) }, offset: 0, limit: 50 }, asAlice);
    expect(listed).toMatchObject({ items: [], total: 0 });
    await expect(service().getMidjourney(bobs[0]!.id, asAlice)).rejects.toMatchObject({ code: 'TASK_NOT_FOUND' });
    const bobsTask = tasks.find((t) => t.user_id === bob.userId)!;
    await expect(service().getTask(bobsTask.id, asAlice)).rejects.toMatchObject({ code: 'TASK_NOT_FOUND' });
    expect(await service().getTask(bobsTask.id, { id: bob.userId!, role: 1 })).toMatchObject({ id: bobsTask.id });
  });
});
