import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MODEL_RATIO } from '../../gateway/src/domain/options/index.ts';
import { PRICES_CHANNEL } from '../../gateway/src/domain/pricing/service.ts';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { DashboardClient, refusalOf, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { eventually } from '../support/wait.ts';

let gateway: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;
let normal: DashboardClient;
let admin: DashboardClient;

beforeAll(async () => {
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(gatewayEnv(database.options, testNamespace()));
  root = await setupRoot(gateway.url);
  for (const name of ['normal', 'admin']) {
    expect((await root.post('/api/user/', { username: name, password: 'password-1' })).body.success).toBe(true);
  }
  normal = new DashboardClient(gateway.url);
  await normal.login('normal', 'password-1');
  admin = new DashboardClient(gateway.url);
  await admin.login('admin', 'password-1');
  await root.post('/api/user/manage', { id: admin.userId, action: 'promote' });
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
});

const optionValue = async (key: string) =>
  ((await root.get('/api/option/')).body.data as Array<{ key: string; value: string }>).find((o) => o.key === key)
    ?.value;

describe('options API', () => {
  it('is for the root only', async () => {
    for (const c of [normal, admin]) {
      expect(refusalOf(await c.get('/api/option/'))).toMatchObject({ status: 200, success: false });
      expect(refusalOf(await c.put('/api/option/', { key: 'SystemName', value: 'x' }))).toMatchObject({
        status: 200,
        success: false,
      });
      expect(refusalOf(await c.post('/api/option/rest_model_ratio'))).toMatchObject({ status: 200, success: false });
    }
    expect(gateway.options.get('SystemName')).toBe('Tollgate');
  });

  it('lists every option but never a secret value', async () => {
    await gateway.options.setMany({
      SMTPToken: 'smtp-password',
      GitHubClientSecret: 'gh-secret',
      SystemName: 'Listed',
    });
    const answer = await root.get('/api/option/');
    const keys = answer.body.data.map((o: { key: string }) => o.key);
    expect(keys).toEqual(
      expect.arrayContaining(['SystemName', 'ModelRatio', 'QuotaPerUnit', 'gemini.safety_settings']),
    );
    expect(keys).not.toEqual(expect.arrayContaining(['SMTPToken']));
    expect(keys).not.toEqual(expect.arrayContaining(['GitHubClientSecret']));
    expect(JSON.stringify(answer.body)).not.toMatch(/smtp-password|gh-secret/);
    expect(await optionValue('SystemName')).toBe('Listed');
  });

  it('saves one key at a time, validated by the option table, and applies it at once', async () => {
    expect((await root.put('/api/option/', { key: 'SystemName', value: 'Saved Name' })).body).toEqual({
      success: true,
      message: 'Saved',
    });
    expect((await root.get('/api/status')).body.data.system_name).toBe('Saved Name');
    expect((await root.put('/api/option/', { key: 'DrawingEnabled', value: false })).body.success).toBe(true);
    expect(gateway.options.getBoolean('DrawingEnabled')).toBe(false);
    expect((await root.put('/api/option/', { key: 'RetryTimes', value: 3 })).body.success).toBe(true);
    expect(gateway.options.getNumber('RetryTimes')).toBe(3);

    const refusals: Array<[unknown, string]> = [
      [{ key: 'NoSuchOption', value: '1' }, 'OPTION_UNKNOWN'],
      [{ key: 'DrawingEnabled', value: 'yes' }, 'OPTION_NOT_BOOLEAN'],
      [{ key: 'RetryTimes', value: '1.5' }, 'OPTION_NOT_INTEGER'],
      [{ key: 'gemini.thinking_adapter_budget_tokens_percentage', value: '1.5' }, 'OPTION_TOO_LARGE'],
      [{ key: 'ModelRatio', value: '{"gpt-4o": ' }, 'OPTION_INVALID_JSON'],
      [{ key: 'SystemName' }, 'INVALID_REQUEST'],
      [{ value: 'x' }, 'INVALID_REQUEST'],
    ];
    for (const [body, code] of refusals) {
      const answer = await root.put('/api/option/', body);
      expect(answer.status, JSON.stringify(body)).toBe(200);
      expect(answer.body.code).toBe(code);
    }
    const zh = await root.call('PUT', '/api/option/', { key: 'Chats', value: '[oops' }, { 'accept-language': 'zh' });
    expect(zh.body.message).toContain('不是合法的 JSON 字符串');
    expect(gateway.options.get('SystemName')).toBe('Saved Name');
    expect(gateway.options.getNumber('RetryTimes')).toBe(3);
  });

  it('refuses edits of an option declared by a custom resource, naming it', async () => {
    await gateway.store.db
      .insertInto('options')
      .values({
        key: 'TopUpLink',
        value: 'https://pay.example',
        updated_at: 1,
        managed_by: 'operator',
        managed_namespace: 'prod',
        managed_name: 'settings',
      })
      .onConflict((c) =>
        c.column('key').doUpdateSet({ managed_by: 'operator', managed_namespace: 'prod', managed_name: 'settings' }),
      )
      .execute();
    const answer = await root.put('/api/option/', { key: 'TopUpLink', value: 'https://elsewhere.example' });
    expect(answer.status).toBe(200);
    expect(answer.body.message).toContain('prod/settings');
  });

  it('resets the model ratios to their defaults', async () => {
    await root.put('/api/option/', { key: 'ModelRatio', value: JSON.stringify({ 'only-model': 2 }) });
    expect(JSON.parse((await optionValue('ModelRatio'))!)).toEqual({ 'only-model': 2 });
    expect((await root.post('/api/option/rest_model_ratio')).body.success).toBe(true);
    expect(JSON.parse((await optionValue('ModelRatio'))!)).toEqual(DEFAULT_MODEL_RATIO);
  });
});

describe('model prices owned by custom resources', () => {
  it('lays them over the option maps and refuses option edits that change them', async () => {
    await gateway.store.db
      .insertInto('model_prices')
      .values({
        model: 'gpt-4o',
        model_ratio: 9,
        completion_ratio: 2,
        updated_at: 1,
        managed_by: 'operator',
        managed_namespace: 'ai',
        managed_name: 'gpt-4o-price',
      })
      .execute();
    await gateway.cluster.bus.publish(PRICES_CHANNEL, 'changed');
    const ratios = await eventually(
      async () => JSON.parse((await optionValue('ModelRatio'))!) as Record<string, number>,
      (r) => r['gpt-4o'] === 9,
      1000,
    );
    expect(ratios['gpt-4o']).toBe(9);
    const refused = await root.put('/api/option/', {
      key: 'ModelRatio',
      value: JSON.stringify({ ...ratios, 'gpt-4o': 3 }),
    });
    expect(refused.status).toBe(200);
    expect(refused.body.message).toContain('ModelPrice ai/gpt-4o-price');
    const kept = await root.put('/api/option/', {
      key: 'ModelRatio',
      value: JSON.stringify({ ...ratios, 'gpt-4o-mini': 0.1 }),
    });
    expect(kept.body.success).toBe(true);
  });
});

describe('pricing', () => {
  it('lists the models enabled channels serve, with the groups the caller can use', async () => {
    expect((await new DashboardClient(gateway.url).get('/api/pricing')).body.data).toEqual([]);
    const channel = await gateway.store.db
      .insertInto('channels')
      .values({ type: 1, name: 'priced', key_encrypted: 'x', created_time: 1 })
      .returning('id')
      .executeTakeFirstOrThrow();
    await gateway.store.db
      .insertInto('abilities')
      .values([
        { group: 'default', model: 'gpt-4o', channel_id: channel.id, enabled: true },
        { group: 'vip', model: 'gpt-4o', channel_id: channel.id, enabled: true },
        { group: 'default', model: 'dall-e-3', channel_id: channel.id, enabled: true },
        { group: 'default', model: 'mystery-model', channel_id: channel.id, enabled: true },
        { group: 'svip', model: 'svip-only', channel_id: channel.id, enabled: true },
        { group: 'default', model: 'switched-off', channel_id: channel.id, enabled: false },
      ])
      .execute();
    const visitor = await new DashboardClient(gateway.url).get('/api/pricing');
    expect(visitor.body).toMatchObject({
      success: true,
      group_ratio: { default: 1, vip: 1 },
      usable_group: { default: '默认分组', vip: 'vip分组' },
    });
    const byModel = Object.fromEntries(visitor.body.data.map((i: { model_name: string }) => [i.model_name, i]));
    expect(Object.keys(byModel).sort()).toEqual(['dall-e-3', 'gpt-4o', 'mystery-model']);
    expect(byModel['gpt-4o']).toEqual({
      model_name: 'gpt-4o',
      quota_type: 0,
      model_ratio: 9,
      completion_ratio: 2,
      model_price: 0,
      enable_groups: ['default', 'vip'],
      configured: true,
    });
    expect(byModel['dall-e-3']).toMatchObject({ quota_type: 1, model_price: 0.04, configured: true });
    expect(byModel['mystery-model']).toMatchObject({ configured: false });

    // A user of the svip group also sees what svip reaches.
    await root.put('/api/user/', { id: normal.userId, group: 'svip' });
    const svip = await normal.get('/api/pricing');
    expect(svip.body.data.map((i: { model_name: string }) => i.model_name)).toContain('svip-only');
    expect(Object.keys(svip.body.group_ratio)).toContain('svip');
  });
});

describe('models by channel type', () => {
  it('answers the known models of each channel type to signed-in users', async () => {
    const models = (await normal.get('/api/models')).body.data;
    expect(models['1']).toEqual(expect.arrayContaining(['gpt-4o']));
    expect(models['14']).toEqual(expect.arrayContaining([expect.stringMatching(/^claude-/)]));
    expect((await new DashboardClient(gateway.url).get('/api/models')).status).toBe(401);
  });
});

describe('OpenAPI', () => {
  it('publishes the route schemas as an OpenAPI document with a browsable page', async () => {
    const document = (await root.get('/api/openapi.json')).body;
    expect(document.openapi).toMatch(/^3\./);
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining(['/api/setup', '/api/status', '/api/user/login', '/api/option/', '/api/pricing']),
    );
    const setupBody = document.paths['/api/setup'].post.requestBody.content['application/json'].schema;
    expect(Object.keys(setupBody.properties)).toEqual(
      expect.arrayContaining(['username', 'password', 'confirmPassword']),
    );
    const page = await fetch(`${gateway.url}/api/docs/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('swagger');
  });
});
