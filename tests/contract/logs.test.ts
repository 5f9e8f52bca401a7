import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts';
import {
  type ContractGateway,
  expectOk,
  expectPage,
  expectRefusal,
  expectShape,
  expectSignedOut,
  type FrontEnd,
  query,
  type Shape,
  startContractGateway,
} from './support.ts';

/**
 * Observation and use: usage log and its stats, drawing and task logs, dashboard data, pricing page and
 * playground (CATALOGUE.md "Logs, drawing and task logs, dashboard"). The log rows come from real calls
 * through the relay to a mock upstream, so their shape is what a real consume or top-up writes.
 */

let g: ContractGateway;
let root: FrontEnd;
let alice: FrontEnd;
let upstream: MockOpenAI;
let channelId: number;
const started = Math.floor(Date.now() / 1000) - 60;

/** useUsageLogsData.jsx `setLogsFormat` and UsageLogsColumnDefs.jsx. */
const LOG: Shape = {
  id: 'integer',
  type: 'integer',
  created_at: 'integer',
  username: 'string',
  token_name: 'string',
  group: 'string',
  model_name: 'string',
  is_stream: 'boolean',
  use_time: 'integer',
  prompt_tokens: 'integer',
  completion_tokens: 'integer',
  quota: 'integer',
  content: 'string',
  other: 'json-text',
};

/** What helpers/render.jsx renderModelPrice multiplies for a consume row: a missing one shows NaN. */
const PRICING_OTHER: Shape = {
  model_ratio: 'number',
  model_price: 'number',
  completion_ratio: 'number',
  group_ratio: 'number',
};

/** The filters as the page builds them: every one present, empty ones as ''. */
const userFilters = (extra: Record<string, string | number> = {}) => ({
  type: 0,
  token_name: '',
  model_name: '',
  start_timestamp: started,
  end_timestamp: Math.floor(Date.now() / 1000) + 3600,
  group: '',
  request_id: '',
  ...extra,
});
const adminFilters = (extra: Record<string, string | number> = {}) => ({
  ...userFilters(),
  username: '',
  channel: '',
  ...extra,
});

const selfLogs = async (extra: Record<string, string | number> = {}) =>
  expectOk(await alice.get(`/api/log/self?${query({ p: 1, page_size: 10, ...userFilters(extra) })}`));

/** The key as the token page hands it out: `sk-` and the revealed key. */
const handedOut = (revealed: string) => `sk-${revealed.replace(/^sk-/, '')}`;

beforeAll(async () => {
  upstream = await startMockOpenAI();
  g = await startContractGateway('10.45.0', { ERROR_LOG_ENABLED: 'true' });
  root = g.root;
  alice = await g.user('alice');

  expectOk(
    await root.post('/api/channel/', {
      name: 'logs-upstream',
      type: 1,
      key: 'sk-upstream',
      base_url: upstream.url,
      models: 'gpt-4o-mini',
      group: 'default',
      priority: 0,
      weight: 0,
      auto_ban: 1,
    }),
  );
  const channels = expectOk(await root.get('/api/channel/?p=1&page_size=10&id_sort=false&tag_mode=false')).items;
  channelId = channels[0].id;

  const [code] = expectOk(
    await root.post('/api/redemption/', { name: 'logs', quota: 5_000_000, count: 1, expired_time: 0 }),
  );
  expectOk(await alice.post('/api/user/topup', { key: code }));

  expectOk(
    await alice.post('/api/token/', {
      name: 'logs-key',
      remain_quota: 0,
      expired_time: -1,
      unlimited_quota: true,
      model_limits_enabled: false,
      model_limits: '',
      allow_ips: '',
      group: '',
    }),
  );
  const token = expectOk(await alice.get('/api/token/?p=1&size=10')).items[0];
  const key = handedOut(expectOk(await alice.post(`/api/token/${token.id}/key`)).key);
  for (const stream of [false, true]) {
    const relayed = await fetch(`${g.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', stream, messages: [{ role: 'user', content: 'Hello there' }] }),
    });
    const text = await relayed.text();
    expect(relayed.status, text).toBe(200);
  }
  // One failed call, for an error row (type 5).
  upstream.behaviour = { failWith: { status: 500, message: 'upstream exploded', times: 1 } };
  const failed = await fetch(`${g.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Fail please' }] }),
  });
  await failed.text();
  upstream.behaviour = {};
  expect(failed.status).toBeGreaterThanOrEqual(500);
});

afterAll(async () => {
  await g?.stop();
  await upstream?.close();
});

describe('usage log (useUsageLogsData.jsx loadLogs)', () => {
  it('shows the relayed call once its consume log is written (logs are written in batches)', async () => {
    await expect.poll(async () => (await selfLogs({ type: 2 })).total).toBe(2);
  });

  it("answers the user's page with the fields the table reads, including page_size", async () => {
    const data = await selfLogs();
    const items = expectPage(data, LOG);
    expect(data).toMatchObject({ page: 1, page_size: 10 });
    expect(
      items
        .filter((l) => l.type !== 5)
        .map((l) => l.type)
        .sort(),
    ).toEqual([1, 2, 2]);
  });

  it('answers consume rows whose other carries every ratio the billing renderer multiplies', async () => {
    const rows = expectPage(await selfLogs({ type: 2 }), LOG);
    for (const row of rows) {
      expect(row).toMatchObject({ type: 2, model_name: 'gpt-4o-mini', token_name: 'logs-key', username: 'alice' });
      expect(row.prompt_tokens).toBeGreaterThan(0);
      expect(row.quota).toBeGreaterThan(0);
      expectShape(row, { other: 'json-object-text' }, 'row');
      expectShape(JSON.parse(row.other), PRICING_OTHER, 'other');
    }
  });

  it('answers a streamed row with the first-token time (other.frt) the use-time column divides', async () => {
    const streamed = ((await selfLogs({ type: 2 })).items as any[]).filter((row) => row.is_stream);
    expect(streamed).toHaveLength(1);
    expectShape(JSON.parse(streamed[0].other), { frt: 'number' }, 'other');
  });

  it('answers an error row (ERROR_LOG_ENABLED) whose other the retry column can JSON.parse', async () => {
    await expect.poll(async () => (await selfLogs({ type: 5 })).total).toBe(1);
    const [row] = expectPage(await selfLogs({ type: 5 }), LOG);
    expect(row).toMatchObject({ type: 5, model_name: 'gpt-4o-mini' });
    expect(row.content.length).toBeGreaterThan(0);
  });

  it('answers a top-up row with content the expanded row shows', async () => {
    const [row] = expectPage(await selfLogs({ type: 1 }), LOG);
    expect(row.type).toBe(1);
    expect(row.content.length).toBeGreaterThan(0);
  });

  it("answers the admin page with the channel columns and every user's rows", async () => {
    const data = expectOk(await root.get(`/api/log/?${query({ p: 1, page_size: 10, ...adminFilters({ type: 2 }) })}`));
    const rows = expectPage(data, { ...LOG, channel: 'integer', channel_name: 'string', user_id: 'integer' });
    for (const row of rows) {
      expect(row).toMatchObject({ channel: channelId, channel_name: 'logs-upstream', username: 'alice' });
      // The retry column joins other.admin_info.use_channel when admin_info is there.
      const adminInfo = JSON.parse(row.other).admin_info;
      if (adminInfo?.use_channel !== undefined && adminInfo.use_channel !== null) {
        expect(Array.isArray(adminInfo.use_channel)).toBe(true);
      }
    }
    const byUser = expectOk(
      await root.get(
        `/api/log/?${query({ p: 1, page_size: 10, ...adminFilters({ username: 'alice', channel: channelId }) })}`,
      ),
    );
    expect(expectPage(byUser, LOG).every((l) => l.username === 'alice')).toBe(true);
  });

  it('refuses the admin log to a normal user, and answers 401 when signed out', async () => {
    expectRefusal(await alice.get(`/api/log/?${query({ p: 1, page_size: 10, ...adminFilters() })}`));
    expectSignedOut(await g.visitor().get(`/api/log/self?${query({ p: 1, page_size: 10, ...userFilters() })}`));
  });
});

describe('usage stats (useUsageLogsData.jsx getLogSelfStat, getLogStat; UsageLogsActions.jsx)', () => {
  it('answers quota, rpm and tpm as numbers, quota matching the consume rows', async () => {
    const spent = ((await selfLogs({ type: 2 })).items as any[]).reduce((sum, row) => sum + row.quota, 0);
    const own = expectOk(await alice.get(`/api/log/self/stat?${query(userFilters())}`));
    expectShape(own, { quota: 'integer', rpm: 'number', tpm: 'number' }, 'self stat');
    expect(own.quota).toBe(spent);
    const all = expectOk(await root.get(`/api/log/stat?${query(adminFilters())}`));
    expectShape(all, { quota: 'integer', rpm: 'number', tpm: 'number' }, 'stat');
    expect(all.quota).toBe(spent);
  });
});

describe('drawing and task logs (useMjLogsData.js, useTaskLogsData.js)', () => {
  beforeAll(async () => {
    const db = g.gateway.store.db;
    const now = Date.now();
    await db
      .insertInto('midjourneys')
      .values({
        user_id: alice.userId!,
        channel_id: channelId,
        mj_id: 'mj-contract',
        action: 'IMAGINE',
        status: 'SUCCESS',
        progress: '100%',
        prompt: 'a cat',
        image_url: 'https://img.example/cat.png',
        submit_time: now - 60_000,
        quota: 1000,
      })
      .execute();
    await db
      .insertInto('tasks')
      .values({
        user_id: alice.userId!,
        channel_id: channelId,
        task_id: 'task-contract',
        platform: 'suno',
        action: 'MUSIC',
        status: 'SUCCESS',
        progress: '100%',
        submit_time: Math.floor(now / 1000) - 60,
        created_at: Math.floor(now / 1000) - 60,
        updated_at: Math.floor(now / 1000) - 60,
        quota: 2000,
        properties: '{}',
        data: '{}',
        private_data: '{}',
      })
      .execute();
  });

  const MJ: Shape = {
    id: 'integer',
    submit_time: 'integer',
    finish_time: 'integer',
    action: 'string',
    mj_id: 'string',
    code: 'integer',
    status: 'string',
    progress: 'string',
    image_url: 'string',
    prompt: 'string',
    prompt_en: 'string',
    fail_reason: 'string',
  };
  const TASK: Shape = {
    id: 'integer',
    submit_time: 'integer',
    finish_time: 'integer',
    platform: 'string',
    action: 'string',
    task_id: 'string',
    status: 'string',
    progress: 'string',
    fail_reason: 'string',
  };

  it('answers the drawing log as a page, timestamps in milliseconds', async () => {
    const ms = { start_timestamp: Date.now() - 30 * 86_400_000, end_timestamp: Date.now() + 3_600_000 };
    const own = expectOk(await alice.get(`/api/mj/self/?${query({ p: 1, page_size: 10, mj_id: '', ...ms })}`));
    expect(expectPage(own, MJ).map((t) => t.mj_id)).toEqual(['mj-contract']);
    const all = expectOk(
      await root.get(`/api/mj/?${query({ p: 1, page_size: 10, channel_id: '', mj_id: '', ...ms })}`),
    );
    expect(expectPage(all, { ...MJ, channel_id: 'integer' }).map((t) => t.mj_id)).toEqual(['mj-contract']);
  });

  it('answers the task log as a page, timestamps in seconds', async () => {
    const s = { start_timestamp: started - 86_400, end_timestamp: Math.floor(Date.now() / 1000) + 3600 };
    const own = expectOk(await alice.get(`/api/task/self?${query({ p: 1, page_size: 10, ...s })}`));
    expect(expectPage(own, TASK).map((t) => t.task_id)).toEqual(['task-contract']);
    const all = expectOk(await root.get(`/api/task/?${query({ p: 1, page_size: 10, ...s })}`));
    expect(expectPage(all, { ...TASK, channel_id: 'integer' }).map((t) => t.task_id)).toEqual(['task-contract']);
  });
});

describe('dashboard data (hooks/dashboard/useDashboardData.js)', () => {
  it('answers the usage buckets as a list of {model_name, count, quota, token_used, created_at}', async () => {
    const params = query({
      start_timestamp: started - 86_400,
      end_timestamp: Math.floor(Date.now() / 1000) + 3600,
      default_time: 'hour',
    });
    const buckets = expectOk(await alice.get(`/api/data/self?${params}`));
    expect(Array.isArray(buckets)).toBe(true);
    for (const [i, b] of buckets.entries()) {
      expectShape(
        b,
        { model_name: 'string', count: 'integer', quota: 'integer', token_used: 'integer', created_at: 'integer' },
        `bucket ${i}`,
      );
    }
    expect(Array.isArray(expectOk(await root.get(`/api/data/?${params}&username=`)))).toBe(true);
  });
});

describe('pricing page (hooks/model-pricing/useModelPricingData.jsx)', () => {
  it('answers data, group_ratio and usable_group at the top level, for visitors and users', async () => {
    for (const c of [g.visitor(), alice]) {
      const answer = await c.get('/api/pricing');
      const models = expectOk(answer);
      expect(Array.isArray(models)).toBe(true);
      const model = models.find((m: any) => m.model_name === 'gpt-4o-mini');
      expect(model, 'gpt-4o-mini priced and served').toBeDefined();
      expectShape(
        model,
        {
          model_name: 'string',
          quota_type: 'integer',
          model_ratio: 'number',
          completion_ratio: 'number',
          model_price: 'number',
          enable_groups: 'array',
        },
        'model',
      );
      expect(model.enable_groups).toContain('default');
      expectShape(answer.body, { group_ratio: 'object', usable_group: 'object' }, 'answer');
      expect(answer.body.group_ratio.default).toBeTypeOf('number');
    }
  });
});

describe('playground (hooks/playground/useApiRequest.jsx)', () => {
  it('streams a chat with the session, ending with [DONE]', async () => {
    const response = await fetch(`${g.url}/pg/chat/completions`, {
      method: 'POST',
      headers: {
        cookie: alice.cookie,
        'new-api-user': String(alice.userId),
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        model: 'gpt-4o-mini',
        group: 'default',
        messages: [{ role: 'user', content: 'Hi' }],
        stream: true,
        temperature: 0.7,
        max_tokens: 64,
      }),
    });
    const text = await response.text();
    expect(response.status, text).toBe(200);
    const events = text
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => line.slice(6));
    expect(events.at(-1)).toBe('[DONE]');
    const content = events
      .slice(0, -1)
      .map((e) => JSON.parse(e).choices?.[0]?.delta?.content ?? '')
      .join('');
    expect(content.length).toBeGreaterThan(0);
  });
});
