import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts';
import { type MockServer, serveMock } from '../support/mock-server.ts';
import {
  type ContractGateway,
  expectOk,
  expectPage,
  expectRefusal,
  expectShape,
  type FrontEnd,
  query,
  type Shape,
  startContractGateway,
} from './support.ts';

/** The channels page, its drawers and modals (CATALOGUE.md "Channels"). */

let g: ContractGateway;
let root: FrontEnd;
let upstream: MockOpenAI;
/** An OpenAI-style upstream that only knows the legacy billing dashboard (balance 120 - 20.50 USD). */
let billing: MockServer;
const KEY = 'sk-upstream-key-for-contract-tests';

beforeAll(async () => {
  upstream = await startMockOpenAI();
  billing = await serveMock(async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://mock').pathname;
    const answer =
      path === '/v1/dashboard/billing/subscription'
        ? { object: 'billing_subscription', hard_limit_usd: 120, soft_limit_usd: 100, access_until: 0 }
        : path === '/v1/dashboard/billing/usage'
          ? { object: 'list', daily_costs: [], total_usage: 2050 }
          : undefined;
    res.writeHead(answer ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(answer ?? { error: { message: 'not found' } }));
  });
  g = await startContractGateway('10.42.0');
  root = g.root;
});

afterAll(async () => {
  await g?.stop();
  await upstream?.close();
  await billing?.close();
});

/** ChannelsColumnDefs.jsx and useChannelsData.jsx `setChannelFormat`. */
const LIST_ITEM: Shape = {
  id: 'integer',
  name: 'string',
  type: 'integer',
  status: 'integer',
  group: 'string',
  models: 'string',
  tag: ['string', 'null'],
  priority: 'integer',
  weight: 'integer',
  response_time: 'integer',
  balance: 'number',
  used_quota: 'integer',
  test_time: 'integer',
  balance_updated_time: 'number',
  created_time: 'integer',
};

/** EditChannelModal.jsx `loadChannel`: strings it splits or JSON.parses. */
const DETAIL: Shape = {
  ...LIST_ITEM,
  key: 'string',
  // new-api itself answers these three as null when unset; the drawer copes with both.
  base_url: ['string', 'null'],
  other: ['string', 'null'],
  test_model: ['string', 'null'],
  auto_ban: 'integer',
  model_mapping: 'json-text',
  status_code_mapping: 'json-text',
  setting: 'json-text',
  param_override: 'json-text',
  header_override: 'json-text',
  other_info: 'json-text',
};

let counter = 0;
/** The drawer's form after `submit` (EditChannelModal.jsx), for a new OpenAI-type channel. */
const form = (extra: Record<string, unknown> = {}) => ({
  name: `contract-${++counter}`,
  type: 1,
  key: KEY,
  openai_organization: '',
  max_input_tokens: 0,
  base_url: upstream.url,
  other: '',
  model_mapping: '',
  status_code_mapping: '',
  models: 'gpt-4o-mini,gpt-4o',
  auto_ban: 1,
  test_model: '',
  groups: ['default'],
  group: 'default',
  priority: 0,
  weight: 0,
  token_limit: 0,
  tag: '',
  multi_key_mode: 'random',
  setting: JSON.stringify({
    force_format: false,
    thinking_to_content: false,
    proxy: '',
    pass_through_body_enabled: false,
    system_prompt: '',
    system_prompt_override: false,
  }),
  settings: JSON.stringify({ allow_service_tier: false, disable_store: false, allow_safety_identifier: false }),
  ...extra,
});

/** Creates a channel the way the current drawer does ({mode, channel}) and returns its id. */
async function create(extra: Record<string, unknown> = {}): Promise<number> {
  const channel = form(extra);
  expectOk(await root.post('/api/channel/', { mode: 'single', channel }));
  const found = await root.get(
    `/api/channel/search?${query({ keyword: channel.name, group: '', model: '', id_sort: false, tag_mode: false, p: 1, page_size: 10 })}`,
  );
  const item = (expectOk(found).items as any[]).find((c) => c.name === channel.name);
  expect(item, `channel ${channel.name} found`).toBeDefined();
  return item.id;
}

const listUrl = (params: Record<string, string | number | boolean> = {}) =>
  `/api/channel/?${query({ p: 1, page_size: 10, id_sort: false, tag_mode: false, ...params })}`;

describe('creating (EditChannelModal.jsx submit)', () => {
  it('accepts the current drawer body {mode, channel} and the spec form (the bare channel)', async () => {
    await create();
    const bare = form();
    expectOk(await root.post('/api/channel/', bare));
  });

  it('refuses a channel without name or key, and an invalid model mapping, as business refusals', async () => {
    expectRefusal(await root.post('/api/channel/', { mode: 'single', channel: form({ name: '', key: '' }) }));
    expectRefusal(await root.post('/api/channel/', { mode: 'single', channel: form({ model_mapping: '{not json' }) }));
  });

  it('refuses a normal user as a business refusal', async () => {
    const c = await g.user('chan-user');
    expectRefusal(await c.post('/api/channel/', { mode: 'single', channel: form() }));
    expectRefusal(await c.get(listUrl()));
  });
});

describe('the table (useChannelsData.jsx loadChannels, searchChannels)', () => {
  it('answers a page of channels with comma-string groups and models and without keys', async () => {
    await create({ tag: 'table-tag' });
    const data = expectOk(await root.get(listUrl()));
    const items = expectPage(data, LIST_ITEM);
    expect(items.length).toBeGreaterThan(0);
    for (const item of items) expect(item.key ?? '').not.toBe(KEY);
  });

  it('answers the same shape in tag mode, with id sort and the type and status filters', async () => {
    const variants: Array<Record<string, boolean | number>> = [
      { tag_mode: true },
      { id_sort: true },
      { type: 1 },
      { status: 1 },
    ];
    for (const params of variants) {
      expectPage(expectOk(await root.get(listUrl(params))), LIST_ITEM, JSON.stringify(params));
    }
  });

  it('searches by keyword, group and model', async () => {
    const id = await create({ models: 'gpt-4o-mini,search-only-model' });
    const data = expectOk(
      await root.get(
        `/api/channel/search?${query({ keyword: '', group: '', model: 'search-only-model', id_sort: false, tag_mode: false, p: 1, page_size: 10 })}`,
      ),
    );
    const items = expectPage(data, LIST_ITEM);
    expect(items.map((c) => c.id)).toEqual([id]);
  });
});

describe('the edit drawer (EditChannelModal.jsx loadChannel, submit)', () => {
  it('GET /api/channel/{id} answers strings the drawer splits and JSON-parses, and no key', async () => {
    const id = await create({ model_mapping: '{"gpt-4o":"gpt-4o-2024-08-06"}' });
    const channel = expectOk(await root.get(`/api/channel/${id}`));
    expectShape(channel, DETAIL, 'channel');
    expect(channel.key).not.toBe(KEY);
    expect(channel.models.split(',')).toEqual(['gpt-4o-mini', 'gpt-4o']);
    expect(channel.group.split(',')).toEqual(['default']);
    expect(JSON.parse(channel.model_mapping)).toEqual({ 'gpt-4o': 'gpt-4o-2024-08-06' });
  });

  it('PUT /api/channel/ with the loaded record sent back (nulls included) saves the edits and keeps the rest', async () => {
    const id = await create();
    expectOk(
      await root.put('/api/channel/', {
        ...expectOk(await root.get(`/api/channel/${id}`)),
        param_override: '{"temperature":0.5}',
        id,
      }),
    );
    const loaded = expectOk(await root.get(`/api/channel/${id}`));
    const edited = {
      ...loaded,
      groups: loaded.group.split(','),
      models: 'gpt-4o-mini',
      priority: 7,
      // What the drawer sends back for fields it did not touch and that came back empty or null.
      param_override: null,
      header_override: null,
      status_code_mapping: null,
      tag: null,
      key: undefined,
      id,
    };
    expectOk(await root.put('/api/channel/', edited));
    const after = expectOk(await root.get(`/api/channel/${id}`));
    expect(after).toMatchObject({ models: 'gpt-4o-mini', priority: 7, name: loaded.name });
    expect(JSON.parse(after.param_override)).toEqual({ temperature: 0.5 });
  });

  it('accepts "", "null" and "{}" in the JSON-text fields and answers them as strings', async () => {
    const id = await create();
    for (const text of ['', 'null', '{}']) {
      const fields = { model_mapping: text, status_code_mapping: text, param_override: text, header_override: text };
      expectOk(await root.put('/api/channel/', { id, ...fields }));
      const channel = expectOk(await root.get(`/api/channel/${id}`));
      expectShape(
        channel,
        {
          model_mapping: 'json-text',
          status_code_mapping: 'json-text',
          param_override: 'json-text',
          header_override: 'json-text',
        },
        `after ${JSON.stringify(text)}`,
      );
    }
  });

  it('refuses JSON-text fields that are not JSON as business refusals', async () => {
    const id = await create();
    for (const field of ['model_mapping', 'status_code_mapping', 'param_override', 'header_override']) {
      expectRefusal(await root.put('/api/channel/', { id, [field]: '{broken' }));
    }
  });
});

describe('row actions (useChannelsData.jsx manageChannel)', () => {
  it('answers data.status for status, priority and weight updates, as the row reads it for each', async () => {
    const id = await create();
    expect(expectOk(await root.put('/api/channel/', { id, status: 2 })).status).toBe(2);
    expect(expectOk(await root.put('/api/channel/', { id, priority: 5 })).status).toBe(2);
    expect(expectOk(await root.put('/api/channel/', { id, weight: 3 })).status).toBe(2);
    expect(expectOk(await root.put('/api/channel/', { id, status: 1 })).status).toBe(1);
    expect(expectOk(await root.get(`/api/channel/${id}`))).toMatchObject({ priority: 5, weight: 3, status: 1 });
  });

  it('copies a channel (POST /api/channel/copy/{id})', async () => {
    const id = await create();
    expectOk(await root.post(`/api/channel/copy/${id}`));
  });

  it('DELETE /api/channel/{id}/ removes it; reading it afterwards is a business refusal', async () => {
    const id = await create();
    expectOk(await root.delete(`/api/channel/${id}/`));
    expectRefusal(await root.get(`/api/channel/${id}`));
  });
});

describe('tests and balances', () => {
  it('GET /api/channel/test/{id}?model= answers success and a numeric time in seconds at the top level', async () => {
    const id = await create();
    const answer = await root.get(`/api/channel/test/${id}?model=gpt-4o-mini`);
    expectOk(answer);
    expect(typeof answer.body.time).toBe('number');
    expect(answer.body.time).toBeGreaterThanOrEqual(0);
    expect(upstream.requests.some((r) => r.path === '/v1/chat/completions' && r.body?.model === 'gpt-4o-mini')).toBe(
      true,
    );
  });

  it('answers a failing upstream as a refusal with the message to show', async () => {
    const id = await create();
    upstream.behaviour = { failWith: { status: 401, message: 'Incorrect API key provided', times: 5 } };
    try {
      expectRefusal(await root.get(`/api/channel/test/${id}?model=gpt-4o-mini`));
    } finally {
      upstream.behaviour = {};
    }
  });

  it('GET /api/channel/test starts testing every enabled channel', async () => {
    expectOk(await root.get('/api/channel/test'));
  });

  it('GET /api/channel/update_balance/{id}/ answers the balance as a number at the top level', async () => {
    const id = await create({ base_url: billing.url });
    const answer = await root.get(`/api/channel/update_balance/${id}/`);
    expectOk(answer);
    expect(answer.body.balance).toBeCloseTo(120 - 20.5, 5);
    expectOk(await root.get('/api/channel/update_balance'));
  });

  it('answers a channel type without a balance API as a business refusal', async () => {
    const id = await create({ type: 14, base_url: upstream.url });
    expectRefusal(await root.get(`/api/channel/update_balance/${id}/`));
  });
});

describe('bulk actions (useChannelsData.jsx)', () => {
  it('DELETE /api/channel/disabled answers the number deleted', async () => {
    const ids = [await create(), await create()];
    for (const id of ids) expectOk(await root.put('/api/channel/', { id, status: 2 }));
    expect(expectOk(await root.delete('/api/channel/disabled'))).toBe(2);
  });

  it('POST /api/channel/batch answers the number deleted', async () => {
    const ids = [await create(), await create()];
    expect(expectOk(await root.post('/api/channel/batch', { ids }))).toBe(2);
  });

  it('POST /api/channel/fix answers the counts the toast reads: data.success and data.fails', async () => {
    const data = expectOk(await root.post('/api/channel/fix'));
    expectShape(data, { success: 'integer', fails: 'integer' }, 'data');
    expect(data.success).toBeGreaterThan(0);
    expect(data.fails).toBe(0);
  });

  it('POST /api/channel/batch/tag answers the number tagged', async () => {
    const ids = [await create(), await create()];
    expect(expectOk(await root.post('/api/channel/batch/tag', { ids, tag: 'batch-tag' }))).toBe(2);
  });
});

describe('tags (useChannelsData.jsx manageTag, EditTagModal.jsx)', () => {
  it('disables and enables every channel of a tag', async () => {
    const ids = [await create({ tag: 'tag-a' }), await create({ tag: 'tag-a' })];
    expectOk(await root.post('/api/channel/tag/disabled', { tag: 'tag-a' }));
    for (const id of ids) expect(expectOk(await root.get(`/api/channel/${id}`)).status).toBe(2);
    expectOk(await root.post('/api/channel/tag/enabled', { tag: 'tag-a' }));
    for (const id of ids) expect(expectOk(await root.get(`/api/channel/${id}`)).status).toBe(1);
  });

  it('answers the models of a tag as a comma string', async () => {
    await create({ tag: 'tag-b', models: 'gpt-4o-mini,gpt-4o' });
    const models = expectOk(await root.get('/api/channel/tag/models?tag=tag-b'));
    expect(typeof models).toBe('string');
    expect(models.split(',').sort()).toEqual(['gpt-4o', 'gpt-4o-mini']);
  });

  it('PUT /api/channel/tag takes the drawer body: comma-string groups and models, empty overrides', async () => {
    const id = await create({ tag: 'tag-c' });
    expectOk(
      await root.put('/api/channel/tag', {
        tag: 'tag-c',
        new_tag: 'tag-c2',
        groups: 'default',
        models: 'gpt-4o',
        param_override: '',
        header_override: '',
      }),
    );
    expect(expectOk(await root.get(`/api/channel/${id}`))).toMatchObject({
      tag: 'tag-c2',
      models: 'gpt-4o',
      group: 'default',
    });
    expectOk(await root.put('/api/channel/tag', { tag: 'tag-c2', priority: 4 }));
    expectOk(await root.put('/api/channel/tag', { tag: 'tag-c2', weight: 6 }));
    expect(expectOk(await root.get(`/api/channel/${id}`))).toMatchObject({ priority: 4, weight: 6 });
  });

  it('refuses a tag edit with an invalid model mapping as a business refusal', async () => {
    await create({ tag: 'tag-d' });
    expectRefusal(await root.put('/api/channel/tag', { tag: 'tag-d', new_tag: 'tag-d', model_mapping: '{broken' }));
  });
});

describe('model and group lists', () => {
  it('answers the lists the drawer and the table read', async () => {
    const models = expectOk(await root.get('/api/channel/models'));
    expect(Array.isArray(models)).toBe(true);
    expect(models.length).toBeGreaterThan(0);
    for (const m of models) expectShape(m, { id: 'string' }, 'model');
    const enabled = expectOk(await root.get('/api/channel/models_enabled'));
    expect(Array.isArray(enabled)).toBe(true);
    for (const m of enabled) expect(typeof m).toBe('string');
    const byType = expectOk(await root.get('/api/models'));
    expect(byType).toBeTypeOf('object');
    for (const names of Object.values(byType)) expect(Array.isArray(names)).toBe(true);
    const groups = expectOk(await root.get('/api/group/'));
    expect(groups).toContain('default');
    for (const name of groups) expect(typeof name).toBe('string');
  });

  it('fetches upstream models for a saved channel and for a new one', async () => {
    const id = await create();
    expect(expectOk(await root.get(`/api/channel/fetch_models/${id}`))).toContain('gpt-4o');
    const fetched = expectOk(
      await root.post('/api/channel/fetch_models', { base_url: upstream.url, type: 1, key: KEY }),
    );
    expect(fetched).toContain('gpt-4o');
  });

  it('refuses fetching models from an upstream that does not answer as a business refusal', async () => {
    expectRefusal(await root.post('/api/channel/fetch_models', { base_url: 'http://127.0.0.1:9', type: 1, key: KEY }));
  });

  it('answers the upstream detection result with a groups list', async () => {
    const id = await create();
    const data = expectOk(await root.get(`/api/channel/test_upstream/${id}`));
    expectShape(data, { groups: 'array' }, 'data');
  });
});
