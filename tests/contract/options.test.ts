import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ContractGateway, expectOk, expectRefusal, type FrontEnd, startContractGateway } from './support.ts';

/** The settings page's tabs: read every option, save one key per call (CATALOGUE.md "Options"). */

let g: ContractGateway;
let root: FrontEnd;

beforeAll(async () => {
  g = await startContractGateway('10.46.0');
  root = g.root;
});

afterAll(async () => {
  await g?.stop();
});

/** The options as OperationSetting.jsx `getOptions` reads them: a map of key to string value. */
async function options(): Promise<Record<string, string>> {
  const data = expectOk(await root.get('/api/option/'));
  expect(Array.isArray(data)).toBe(true);
  const map: Record<string, string> = {};
  for (const item of data) {
    expect(typeof item.key, JSON.stringify(item)).toBe('string');
    expect(typeof item.value, JSON.stringify(item)).toBe('string');
    map[item.key] = item.value;
  }
  return map;
}

const save = (key: string, value: unknown) => root.put('/api/option/', { key, value });

describe('reading (OperationSetting.jsx and the other tabs)', () => {
  it('answers every option as {key, value} with string values, booleans as "true"/"false", JSON as text', async () => {
    const map = await options();
    for (const key of [
      'QuotaForNewUser',
      'QuotaPerUnit',
      'RetryTimes',
      'ModelRatio',
      'CompletionRatio',
      'ModelPrice',
      'GroupRatio',
      'ModelRequestRateLimitEnabled',
      'ModelRequestRateLimitCount',
      'ModelRequestRateLimitSuccessCount',
      'ModelRequestRateLimitDurationMinutes',
    ]) {
      expect(map, key).toHaveProperty(key);
    }
    for (const [key, value] of Object.entries(map)) {
      if (key.endsWith('Enabled')) expect(['true', 'false'], key).toContain(value);
    }
    for (const key of ['ModelRatio', 'CompletionRatio', 'ModelPrice', 'GroupRatio']) {
      expect(JSON.parse(map[key]!), key).toBeTypeOf('object');
    }
  });

  it('never answers a secret it was given', async () => {
    expectOk(await save('EpayKey', 'merchant-secret-value'));
    const text = JSON.stringify(expectOk(await root.get('/api/option/')));
    expect(text).not.toContain('merchant-secret-value');
  });

  it('refuses a normal user as a business refusal', async () => {
    const c = await g.user('opt-user');
    expectRefusal(await c.get('/api/option/'));
    expectRefusal(await c.put('/api/option/', { key: 'RetryTimes', value: '3' }));
  });
});

describe('saving (SettingsGeneral.jsx onSubmit, RateLimitSetting, the model tabs)', () => {
  it('takes text, booleans as "true"/"false" and numbers from number inputs, answering them back as strings', async () => {
    expectOk(await save('RetryTimes', '2'));
    expectOk(await save('DefaultCollapseSidebar', 'true'));
    expectOk(await save('ModelRequestRateLimitCount', 30));
    expectOk(await save('ModelRequestRateLimitDurationMinutes', 2));
    const map = await options();
    expect(map).toMatchObject({
      RetryTimes: '2',
      DefaultCollapseSidebar: 'true',
      ModelRequestRateLimitCount: '30',
      ModelRequestRateLimitDurationMinutes: '2',
    });
    expect(expectOk(await g.visitor().get('/api/status')).default_collapse_sidebar).toBe(true);
  });

  it('takes JSON options as text, "{}" included', async () => {
    expectOk(await save('ModelPrice', JSON.stringify({ 'contract-model': 0.02 })));
    expect(JSON.parse((await options()).ModelPrice!)).toMatchObject({ 'contract-model': 0.02 });
    expectOk(await save('CompletionRatio', '{}'));
    expect(JSON.parse((await options()).CompletionRatio!)).toEqual({});
  });

  it('refuses JSON options that are not JSON, unknown keys and out-of-range numbers as business refusals', async () => {
    expectRefusal(await save('ModelRatio', '{not json'));
    expectRefusal(await save('NoSuchOption', 'x'));
    expectRefusal(await save('ModelRequestRateLimitSuccessCount', 0));
    expectRefusal(await save('ModelRequestRateLimitDurationMinutes', -1));
    expectRefusal(await save('gemini.thinking_adapter_budget_tokens_percentage', 1.5));
  });

  it('resets the model ratios (POST /api/option/rest_model_ratio) with a message to show', async () => {
    expectOk(await save('ModelRatio', JSON.stringify({ 'only-model': 1 })));
    const answer = await root.post('/api/option/rest_model_ratio');
    expectOk(answer);
    expect(answer.body.message.length).toBeGreaterThan(0);
    expect(JSON.parse((await options()).ModelRatio!)).not.toEqual({ 'only-model': 1 });
  });
});
