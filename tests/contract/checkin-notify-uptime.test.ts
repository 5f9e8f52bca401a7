import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockUptimeKuma, startMockUptimeKuma } from '../support/mock-uptime-kuma.ts';
import {
  type ContractGateway,
  expectOk,
  expectRefusal,
  expectShape,
  expectSignedOut,
  type FrontEnd,
  startContractGateway,
} from './support.ts';

/** Check-in, Bark/Gotify settings and the Uptime Kuma panel (CATALOGUE.md "Check-in, push notifications, uptime"). */

let g: ContractGateway;
let root: FrontEnd;
let kuma: MockUptimeKuma;

beforeAll(async () => {
  kuma = await startMockUptimeKuma();
  g = await startContractGateway('10.48.0');
  root = g.root;
});

afterAll(async () => {
  await g?.stop();
  await kuma?.close();
});

const setOption = async (key: string, value: string) => expectOk(await root.put('/api/option/', { key, value }));

describe('check-in (CheckinCalendar.jsx)', () => {
  it('GET and POST /api/user/checkin refuse with 200 while off, and need a session', async () => {
    const u = await g.user('ck1');
    expectRefusal(await u.get('/api/user/checkin'), 'CHECKIN_DISABLED');
    expectRefusal(await u.post('/api/user/checkin'), 'CHECKIN_DISABLED');
    expectSignedOut(await g.visitor().get('/api/user/checkin'));
  });

  it('options checkin_setting.* switch it on; status.checkin_enabled follows; answers the reward and the month', async () => {
    await setOption('checkin_setting.enabled', 'true');
    await setOption('checkin_setting.min_quota', '1000');
    await setOption('checkin_setting.max_quota', '1000');
    expect(expectOk(await g.visitor().get('/api/status')).checkin_enabled).toBe(true);
    const options = expectOk(await root.get('/api/option/')) as Array<{ key: string; value: string }>;
    expect(options.find((o) => o.key === 'checkin_setting.enabled')?.value).toBe('true');

    const u = await g.user('ck2');
    const done = expectOk(await u.post('/api/user/checkin'));
    expectShape(done, { quota_awarded: 'integer', checkin_date: 'string' }, 'checkin');
    expect(done.quota_awarded).toBe(1000);
    expectRefusal(await u.post('/api/user/checkin'), 'CHECKIN_ALREADY_DONE');

    const month = done.checkin_date.slice(0, 7);
    const data = expectOk(await u.get(`/api/user/checkin?month=${month}`));
    expectShape(data, { enabled: 'boolean', min_quota: 'integer', max_quota: 'integer', stats: 'object' }, 'data');
    expectShape(
      data.stats,
      {
        total_quota: 'integer',
        total_checkins: 'integer',
        checkin_count: 'integer',
        checked_in_today: 'boolean',
        records: 'array',
      },
      'stats',
    );
    expect(data.stats.records).toEqual([{ checkin_date: done.checkin_date, quota_awarded: 1000 }]);
    const self = expectOk(await u.get('/api/user/self'));
    expect(self.quota).toBe(1000);
  });
});

describe('push notifications (NotificationSettings.jsx)', () => {
  it('PUT /api/user/setting takes notify_type bark and gotify with their fields; /api/user/self answers them', async () => {
    const u = await g.user('push1');
    expectOk(
      await u.put('/api/user/setting', {
        notify_type: 'gotify',
        quota_warning_threshold: 500000,
        gotify_url: 'https://gotify.example.com',
        gotify_token: 'app-token',
        gotify_priority: 5,
        bark_url: 'https://api.day.app/key/{{title}}/{{content}}',
      }),
    );
    const setting = JSON.parse(expectOk(await u.get('/api/user/self')).setting);
    expectShape(
      setting,
      {
        notify_type: 'string',
        bark_url: 'string',
        gotify_url: 'string',
        gotify_priority: 'integer',
        gotify_token_set: 'boolean',
      },
      'setting',
    );
    expect(setting).toMatchObject({ notify_type: 'gotify', gotify_token_set: true });
    expectRefusal(await u.put('/api/user/setting', { notify_type: 'bark', bark_url: '' }), 'SETTING_INVALID');
  });
});

describe('Uptime Kuma panel (dashboard, GET /api/uptime/status)', () => {
  it('answers a list of {categoryName, monitors: [{name, uptime, status, group}]} to visitors', async () => {
    expect(expectOk(await g.visitor().get('/api/uptime/status'))).toEqual([]);
    kuma.pages.set('s', { groups: [{ name: 'G', monitors: [{ id: 3, name: 'API', beats: [1], uptime: 0.9 }] }] });
    await setOption(
      'console_setting.uptime_kuma_groups',
      JSON.stringify([{ url: kuma.url, slug: 's', categoryName: 'Main' }]),
    );
    await setOption('console_setting.uptime_kuma_enabled', 'true');
    expect(expectOk(await g.visitor().get('/api/status')).uptime_kuma_enabled).toBe(true);
    const data = expectOk(await g.visitor().get('/api/uptime/status'));
    expect(Array.isArray(data)).toBe(true);
    expectShape(data[0], { categoryName: 'string', monitors: 'array' }, 'data[0]');
    expectShape(
      data[0].monitors[0],
      { name: 'string', uptime: 'number', status: 'integer', group: 'string' },
      'monitor',
    );
  });
});
