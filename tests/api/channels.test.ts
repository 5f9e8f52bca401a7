import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { type Answer, DashboardClient, refusalOf, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { closedPort, secretWatch } from '../support/secrets.ts';

let gateway: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;
let admin: DashboardClient;
let member: DashboardClient;
let upstream: Server;
let upstreamUrl: string;
let deadUrl: string;

/** Every plain key handed to the gateway, and every answer it gave: no answer may contain a key. */
const watch = secretWatch();
const { secret, recording } = watch;
/** What the mock upstream was asked. */
const upstreamRequests: Array<{ url: string; headers: IncomingHttpHeaders }> = [];

const db = () => gateway.store.db;
const zh = { 'accept-language': 'zh' };

let counter = 0;
const channel = (extra: Record<string, unknown> = {}) => ({
  name: `channel-${++counter}`,
  key: secret(),
  models: 'gpt-4o,gpt-4o-mini',
  ...extra,
});

async function create(extra: Record<string, unknown> = {}, client = root): Promise<any> {
  const answer = await client.post('/api/channel/', channel(extra));
  expect(answer.body, JSON.stringify(answer.body)).toMatchObject({ success: true });
  return answer.body.data;
}

const row = (id: number) => db().selectFrom('channels').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const channelCount = async () =>
  Number(
    (
      await db()
        .selectFrom('channels')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );
const abilities = (id: number) =>
  db()
    .selectFrom('abilities')
    .select(['group', 'model', 'enabled', 'priority', 'weight', 'tag'])
    .where('channel_id', '=', id)
    .orderBy('group')
    .orderBy('model')
    .execute();
const setManaged = (id: number) =>
  db()
    .updateTable('channels')
    .set({
      managed_by: 'tollgate-operator',
      managed_namespace: 'ai',
      managed_name: `openai-${id}`,
      managed_uid: `u-${id}`,
    })
    .where('id', '=', id)
    .execute();
const clearChannels = () => db().deleteFrom('channels').execute();

/** The mock upstream: OpenAI-style, Anthropic, Gemini and Ollama model lists, and some broken answers. */
function startUpstream(): Promise<Server> {
  const server = createServer((request, response) => {
    upstreamRequests.push({ url: request.url ?? '', headers: request.headers });
    const url = new URL(request.url ?? '/', 'http://upstream');
    const json = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    const bearer = request.headers.authorization?.replace(/^Bearer /, '') ?? '';
    if (url.pathname === '/bad-json/v1/models') return response.end('<html>not json</html>');
    if (url.pathname === '/wrong-shape/v1/models') return json(200, { models: 'none' });
    if (url.pathname === '/slow/v1/models') return; // never answers
    if (url.pathname === '/v1/models' && request.headers['x-api-key']) {
      if (request.headers['anthropic-version'] !== '2023-06-01') return json(400, { error: { message: 'version' } });
      return json(200, { data: [{ id: 'claude-mock-2', type: 'model' }, { id: 'claude-mock-1' }], has_more: false });
    }
    if (url.pathname === '/v1beta/models') {
      if (!String(request.headers['x-goog-api-key'] ?? '').startsWith('sk-good'))
        return json(403, { error: 'bad key' });
      return json(200, { models: [{ name: 'models/gemini-mock' }, { name: 'models/gemini-mock-pro' }] });
    }
    if (url.pathname === '/api/tags') return json(200, { models: [{ name: 'llama-mock' }] });
    if (url.pathname === '/v1/models' || url.pathname === '/compatible-mode/v1/models') {
      if (!bearer.startsWith('sk-good')) {
        // Like OpenAI, the error names the key it got: the gateway must not pass it on.
        return json(401, {
          error: { message: `Incorrect API key provided: ${bearer}`, type: 'invalid_request_error' },
        });
      }
      return json(200, { object: 'list', data: [{ id: 'mock-b' }, { id: 'mock-a' }, { id: 'mock-a' }] });
    }
    json(404, { error: { message: 'no such path' } });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function registerUser(username: string): Promise<DashboardClient> {
  const client = new DashboardClient(gateway.url);
  expect((await client.post('/api/user/register', { username, password: 'password-1' })).body.success).toBe(true);
  expect((await client.login(username, 'password-1')).body.success).toBe(true);
  return client;
}

beforeAll(async () => {
  upstream = await startUpstream();
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  deadUrl = `http://127.0.0.1:${await closedPort()}`;

  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(
    gatewayEnv(database.options, testNamespace(), { GLOBAL_API_RATE_LIMIT_ENABLE: 'false' }),
  );
  root = recording(await setupRoot(gateway.url));
  member = recording(await registerUser('member'));
  admin = recording(await registerUser('chanadmin'));
  const promoted = await root.post('/api/user/manage', { id: admin.userId, action: 'promote' });
  expect(promoted.body.data).toEqual({ status: 1, role: 10 });
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
  upstream?.closeAllConnections();
  upstream?.close();
});

describe('access', () => {
  const routes: Array<[string, string, unknown?]> = [
    ['GET', '/api/channel/'],
    ['GET', '/api/channel/search?keyword=x'],
    ['GET', '/api/channel/models'],
    ['GET', '/api/channel/models_enabled'],
    ['GET', '/api/channel/tag/models?tag=x'],
    ['GET', '/api/channel/1'],
    ['GET', '/api/channel/fetch_models/1'],
    ['POST', '/api/channel/fetch_models', { key: 'k' }],
    ['POST', '/api/channel/', { name: 'x', key: 'k', models: 'm' }],
    ['PUT', '/api/channel/', { id: 1, status: 2 }],
    ['POST', '/api/channel/copy/1'],
    ['DELETE', '/api/channel/disabled'],
    ['DELETE', '/api/channel/1'],
    ['DELETE', '/api/channel/1/'],
    ['POST', '/api/channel/batch', { ids: [1] }],
    ['POST', '/api/channel/fix'],
    ['POST', '/api/channel/batch/tag', { ids: [1], tag: 't' }],
    ['PUT', '/api/channel/tag', { tag: 't', priority: 1 }],
    ['POST', '/api/channel/tag/enabled', { tag: 't' }],
    ['POST', '/api/channel/tag/disabled', { tag: 't' }],
  ];

  it.each(routes)('refuses a normal user: %s %s', async (method, path, body) => {
    const before = await channelCount();
    const answer = await member.call(method, path, body);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ success: false, code: 'FORBIDDEN' });
    expect(await channelCount()).toBe(before);
  });

  it('refuses a normal user even with input the schema would reject', async () => {
    const answer = await member.put('/api/channel/', { id: 'not-a-number' });
    expect(answer.status).toBe(200);
  });

  it('refuses callers who are not signed in', async () => {
    const answer = await new DashboardClient(gateway.url).get('/api/channel/');
    expect(answer.status).toBe(401);
    expect(answer.body).toMatchObject({ success: false, code: 'NOT_LOGGED_IN' });
  });

  it('lets an administrator in, but keeps fetching models for an unsaved channel to root', async () => {
    expect((await admin.get('/api/channel/')).status).toBe(200);
    const answer = await admin.post('/api/channel/fetch_models', { base_url: upstreamUrl, type: 1, key: secret() });
    expect(answer.status).toBe(200);
    expect(answer.body.code).toBe('FORBIDDEN');
  });
});

describe('create', () => {
  it('creates a channel with the defaults of spec doc 2 §9 and mirrors it into abilities', async () => {
    const key = secret();
    const answer = await admin.post('/api/channel/', { name: ' main ', key, models: 'gpt-4o, gpt-4o-mini,gpt-4o' });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ success: true, message: 'Channel created' });
    const data = answer.body.data;
    expect(data).toMatchObject({
      name: 'main',
      key: '',
      type: 1,
      auto_ban: 1,
      group: 'default',
      priority: 0,
      weight: 0,
      status: 1,
      models: 'gpt-4o,gpt-4o-mini',
      base_url: '',
      warnings: [],
      ids: [data.id],
    });
    expect(data.created_time).toBeGreaterThan(Date.now() / 1000 - 60);
    const stored = await row(data.id);
    expect(stored.key_encrypted).not.toContain(key);
    expect(stored.key_encrypted).toMatch(/^v1:/);
    expect(await abilities(data.id)).toEqual([
      { group: 'default', model: 'gpt-4o', enabled: true, priority: 0, weight: 0, tag: null },
      { group: 'default', model: 'gpt-4o-mini', enabled: true, priority: 0, weight: 0, tag: null },
    ]);
  });

  it('takes every field, lists for models and groups, and builds models × groups abilities', async () => {
    const data = await create({
      type: 43,
      models: ['deepseek-chat', 'deepseek-reasoner'],
      groups: ['default', 'vip'],
      priority: 5,
      weight: 7,
      tag: 'team',
      auto_ban: 0,
      status: 2,
      base_url: 'https://api.example.com/',
      model_mapping: '{"deepseek-chat":"deepseek-v3"}',
      status_code_mapping: '{"429":"500"}',
      setting: '{"proxy":""}',
      settings: '{}',
      param_override: '{"temperature":0}',
      header_override: '{"X-Test":"1"}',
      test_model: 'deepseek-chat',
      openai_organization: 'org-1',
      other: 'x',
      max_input_tokens: 1000,
      remark: 'note',
    });
    expect(data).toMatchObject({
      type: 43,
      models: 'deepseek-chat,deepseek-reasoner',
      group: 'default,vip',
      priority: 5,
      weight: 7,
      tag: 'team',
      auto_ban: 0,
      status: 2,
      base_url: 'https://api.example.com',
      model_mapping: '{"deepseek-chat":"deepseek-v3"}',
      status_code_mapping: '{"429":"500"}',
      param_override: '{"temperature":0}',
      header_override: '{"X-Test":"1"}',
      test_model: 'deepseek-chat',
      openai_organization: 'org-1',
      max_input_tokens: 1000,
      remark: 'note',
    });
    const rows = await abilities(data.id);
    expect(rows).toHaveLength(4);
    expect(rows.map((r) => `${r.group}/${r.model}`)).toEqual([
      'default/deepseek-chat',
      'default/deepseek-reasoner',
      'vip/deepseek-chat',
      'vip/deepseek-reasoner',
    ]);
    expect(rows.every((r) => r.enabled === false && r.priority === 5 && r.weight === 7 && r.tag === 'team')).toBe(true);
  });

  it.each([
    ['no name', { name: '' }, '请填写渠道名称和渠道密钥！'],
    ['a blank name', { name: '   ' }, '请填写渠道名称和渠道密钥！'],
    ['no key', { key: '' }, '请填写渠道名称和渠道密钥！'],
    ['a key list holding no key', { key: '[]', mode: 'batch' }, '请填写渠道名称和渠道密钥！'],
    ['no models', { models: '' }, '请至少选择一个模型！'],
    ['only commas for models', { models: ' , ,' }, '请至少选择一个模型！'],
    ['an empty model list', { models: [] }, '请至少选择一个模型！'],
    ['a model mapping that is not JSON', { model_mapping: '{gpt-4o: x}' }, '模型映射必须是合法的 JSON 格式！'],
    ['a model mapping that is an array', { model_mapping: '["a"]' }, '模型映射必须是合法的 JSON 格式！'],
    ['a model mapping to a number', { model_mapping: '{"a": 1}' }, '模型映射必须是合法的 JSON 格式！'],
  ])('refuses %s with the spec message and creates nothing', async (_name, extra, message) => {
    const before = await channelCount();
    const answer = await root.call('POST', '/api/channel/', channel(extra), zh);
    expect(answer.status).toBe(200);
    expect(answer.body.success).toBe(false);
    expect(answer.body.message).toBe(message);
    expect(await channelCount()).toBe(before);
  });

  it.each([
    ['status_code_mapping', { status_code_mapping: 'nope' }, 'CHANNEL_JSON_FIELD_INVALID'],
    ['setting', { setting: '[1]' }, 'CHANNEL_JSON_FIELD_INVALID'],
    ['settings', { settings: '"text"' }, 'CHANNEL_JSON_FIELD_INVALID'],
    ['param_override', { param_override: '{' }, 'CHANNEL_JSON_FIELD_INVALID'],
    ['header_override', { header_override: '5' }, 'CHANNEL_JSON_FIELD_INVALID'],
    ['a fractional priority', { priority: 1.5 }, 'CHANNEL_PRIORITY_NOT_INTEGER'],
    ['a negative weight', { weight: -1 }, 'CHANNEL_WEIGHT_INVALID'],
    ['a fractional weight', { weight: 0.5 }, 'CHANNEL_WEIGHT_INVALID'],
    ['an unknown type', { type: 999 }, 'CHANNEL_TYPE_UNKNOWN'],
    ['a base URL that is not http', { base_url: 'ftp://example.com' }, 'CHANNEL_BASE_URL_INVALID'],
    ['a base URL that is no URL', { base_url: 'example dot com' }, 'CHANNEL_BASE_URL_INVALID'],
    ['a number for a name', { name: 42 }, 'INVALID_REQUEST'],
    ['a string priority', { priority: '5' }, 'INVALID_REQUEST'],
    ['an unknown status', { status: 4 }, 'INVALID_REQUEST'],
    ['an unknown mode', { mode: 'many' }, 'INVALID_REQUEST'],
  ])('refuses %s with a stable code and creates nothing', async (_name, extra, code) => {
    const before = await channelCount();
    const answer = await root.post('/api/channel/', channel(extra));
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ success: false, code });
    expect(await channelCount()).toBe(before);
  });

  it('names the field of an invalid JSON object in the message', async () => {
    const answer = await root.call('POST', '/api/channel/', channel({ param_override: 'x' }), zh);
    expect(answer.body.message).toBe('param_override 必须是合法的 JSON 对象！');
  });

  it('strips trailing slashes and flags a base URL ending in /v1 without refusing it', async () => {
    const plain = await create({ base_url: 'https://api.example.com///' });
    expect(plain.base_url).toBe('https://api.example.com');
    expect(plain.warnings).toEqual([]);
    const v1 = await create({ base_url: 'https://api.example.com/v1/' });
    expect(v1.base_url).toBe('https://api.example.com/v1');
    expect(v1.warnings).toEqual(['base_url_ends_with_v1']);
    expect((await row(v1.id)).base_url).toBe('https://api.example.com/v1');
  });

  it('gives type 18 (Spark) an empty `other` the default v2.1, and keeps a given one', async () => {
    const spark = await create({ type: 18, key: 'app1|api-secret|api-key', other: '' });
    expect(spark).toMatchObject({ type: 18, other: 'v2.1' });
    const kept = await root.put('/api/channel/', { id: spark.id, other: 'v3.5' });
    expect(kept.body).toMatchObject({ success: true, data: { other: 'v3.5' } });
    const cleared = await root.put('/api/channel/', { id: spark.id, other: '' });
    expect(cleared.body).toMatchObject({ success: true, data: { other: 'v2.1' } });
    expect((await create({ type: 1 })).other).toBe('');
  });

  it('refuses a composite key missing a part, naming the key and its format; takes either AWS form', async () => {
    const short = await root.post('/api/channel/', channel({ type: 18, key: 'app1|api-secret' }));
    expect(short.body).toMatchObject({ success: false, code: 'CHANNEL_KEY_INVALID' });
    expect(short.body.message).toContain('APPID|APISecret|APIKey');
    const second = await root.post(
      '/api/channel/',
      channel({ type: 23, key: 'app|secret-id|secret-key\napp||secret-key' }),
    );
    expect(second.body).toMatchObject({ success: false, code: 'CHANNEL_KEY_INVALID' });
    expect(second.body.message).toContain('Key 2');
    expect((await create({ type: 33, key: 'AKIAEXAMPLE|secret|us-east-1' })).type).toBe(33);
    expect((await create({ type: 33, key: 'bedrock-api-key|us-west-2' })).type).toBe(33);
    const zhipu = await root.post('/api/channel/', channel({ type: 16, key: 'no-dot-in-it' }));
    expect(zhipu.body).toMatchObject({ success: false, code: 'CHANNEL_KEY_INVALID' });
    expect(zhipu.body.message).toContain('id.secret');
    const aws = await root.post('/api/channel/', channel({ type: 33, key: 'just-a-key' }));
    expect(aws.body.message).toContain('AccessKey|SecretAccessKey|Region or APIKey|Region');
  });

  it('keeps several key lines in one multi-key channel by default', async () => {
    const keys = [secret(), secret(), secret()];
    const data = await create({
      key: `${keys[0]}\n\n${keys[1]}\r\n ${keys[2]} \n${keys[0]}`,
      multi_key_mode: 'polling',
    });
    expect(data.ids).toHaveLength(1);
    expect(data.channel_info).toMatchObject({ is_multi_key: true, multi_key_size: 3, multi_key_mode: 'polling' });
  });

  it('creates one channel per key line in batch mode, also in new-api’s wrapped form', async () => {
    const keys = [secret(), secret()];
    const before = await channelCount();
    const answer = await root.post('/api/channel/', {
      mode: 'batch',
      channel: { name: 'batch', key: keys.join('\n'), models: 'gpt-4o', group: 'default,vip' },
    });
    expect(answer.body).toMatchObject({ success: true, message: 'Created 2 channels' });
    const ids: number[] = answer.body.data.ids;
    expect(ids).toHaveLength(2);
    expect(await channelCount()).toBe(before + 2);
    for (const id of ids) {
      const stored = await row(id);
      expect(stored.name).toBe('batch');
      expect(JSON.parse(stored.channel_info)).toMatchObject({ is_multi_key: false, multi_key_size: 1 });
      expect(await abilities(id)).toHaveLength(2);
    }
  });

  it('treats a JSON array of keys as several keys and one JSON object as one key', async () => {
    const batch = await root.post(
      '/api/channel/',
      channel({ mode: 'batch', key: JSON.stringify([{ a: secret() }, { b: secret() }]) }),
    );
    expect(batch.body.data.ids).toHaveLength(2);
    const single = await create({ key: JSON.stringify({ a: secret(), b: 'x' }, null, 2) });
    expect(single.channel_info).toMatchObject({ is_multi_key: false, multi_key_size: 1 });
  });
});

describe('channel types', () => {
  it('answers Tollgate’s registry: offered types with their protocol, the others with why not', async () => {
    const answer = await admin.get('/api/channel/types');
    expect(answer.body.success).toBe(true);
    const types: any[] = answer.body.data;
    const byId = new Map(types.map((type) => [type.id, type]));
    expect(byId.get(1)).toMatchObject({
      name: 'OpenAI',
      offered: true,
      protocol: 'openai',
      reason: { zh: '', en: '' },
      balance: true,
    });
    expect(byId.get(14)).toMatchObject({ offered: true, protocol: 'anthropic', base_url: 'https://api.anthropic.com' });
    expect(byId.get(3)).toMatchObject({ offered: true, other: { label: { zh: 'API 版本', en: 'API version' } } });
    expect(byId.get(33)).toMatchObject({
      name: 'AWS',
      offered: true,
      protocol: 'bedrock',
      testable: true,
      key: { hint: 'AccessKey|SecretAccessKey|Region or APIKey|Region', separator: '|' },
    });
    expect(byId.get(11)).toMatchObject({ name: 'PaLM', offered: false, protocol: null, testable: false });
    expect(byId.get(11).reason.zh).toContain('Google');
    expect(byId.get(11).reason.en).toContain('Google retired the API');
    expect(byId.get(18)).toMatchObject({ offered: true, protocol: 'xunfei', other: { default: 'v2.1' } });
    expect(byId.get(37)).toMatchObject({
      offered: true,
      protocol: 'dify',
      other: { choices: ['chat', 'agent', 'workflow'] },
    });
    for (const mj of [2, 5])
      expect(byId.get(mj)).toMatchObject({ offered: true, protocol: 'midjourney', testable: false });
    expect(byId.get(55)).toMatchObject({ offered: true, protocol: 'video', endpoints: ['video'], testable: false });
    expect(byId.get(57)?.offered).toBe(false);
    expect(byId.get(50)).toMatchObject({ offered: true, protocol: 'kling', endpoints: ['video'], testable: false });
    expect(byId.get(51)).toMatchObject({ offered: true, protocol: 'jimeng', endpoints: ['video'], testable: false });
    expect(byId.get(54)).toMatchObject({ offered: true, protocol: 'seedance', endpoints: ['video'], testable: false });
    expect(types.filter((type) => type.offered && type.protocol === null)).toEqual([]);
  });

  it('is for administrators', async () => {
    expect(refusalOf(await member.get('/api/channel/types')).success).toBe(false);
  });

  it.each([
    [11, 'PaLM'],
    [21, 'AIProxyLibrary'],
    [57, 'Codex'],
  ])('refuses to create a channel of type %i, naming it', async (type, name) => {
    const before = await channelCount();
    const answer = await root.post('/api/channel/', channel({ type }));
    expect(answer.body.success).toBe(false);
    expect(answer.body.code).toBe('CHANNEL_TYPE_UNSUPPORTED');
    expect(answer.body.message).toContain(`type ${type} (${name}) is not supported yet`);
    expect(await channelCount()).toBe(before);
  });

  it('says why a type is not offered in the caller’s language', async () => {
    const answer = await root.call('POST', '/api/channel/', channel({ type: 11 }), zh);
    expect(answer.body).toMatchObject({ success: false, code: 'CHANNEL_TYPE_UNSUPPORTED' });
    expect(answer.body.message).toBe(
      '渠道type 11 (PaLM)暂不支持：PaLM v1beta2 generateMessage：Google 已停用该接口，请使用 Gemini（24）',
    );
  });

  it('refuses to change a channel to a type not offered, but a stored row of one can be disabled and deleted', async () => {
    const created = await create({ type: 1 });
    const changed = await root.put('/api/channel/', { id: created.id, type: 57 });
    expect(changed.body).toMatchObject({ success: false, code: 'CHANNEL_TYPE_UNSUPPORTED' });
    expect(changed.body.message).toContain('type 57 (Codex)');
    expect((await row(created.id)).type).toBe(1);
    // A row an older version stored as PaLM (11): written directly, the API would refuse it.
    await db().updateTable('channels').set({ type: 11 }).where('id', '=', created.id).execute();
    const listed = await admin.get(`/api/channel/${created.id}`);
    expect(listed.body.data).toMatchObject({ type: 11 });
    const disabled = await root.put('/api/channel/', { id: created.id, type: 11, status: 2 });
    expect(disabled.body).toMatchObject({ success: true, data: { status: 2 } });
    expect((await root.delete(`/api/channel/${created.id}`)).body.success).toBe(true);
  });
});

describe('get', () => {
  it('answers the channel with an empty key', async () => {
    const created = await create({ tag: 'get-tag' });
    const answer = await admin.get(`/api/channel/${created.id}`);
    expect(answer.body).toMatchObject({ success: true, data: { id: created.id, key: '', tag: 'get-tag' } });
    expect(answer.body.data).not.toHaveProperty('key_encrypted');
  });

  it('says an unknown channel is not found, in the spec’s words', async () => {
    const answer = await root.get('/api/channel/999999', zh);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      success: false,
      code: 'CHANNEL_NOT_FOUND',
      message: '渠道未找到，请刷新页面后重试。',
    });
  });

  it('refuses an id that is not a number', async () => {
    expect((await root.get('/api/channel/abc')).body.code).toBe('INVALID_REQUEST');
  });
});

describe('update', () => {
  it('updates every field given and rebuilds the abilities', async () => {
    const created = await create({ tag: 'before' });
    const answer = await root.put('/api/channel/', {
      ...created,
      name: 'renamed',
      models: 'claude-sonnet-4-20250514',
      group: 'vip',
      type: 14,
      base_url: 'https://api.anthropic.com/',
      tag: '',
      priority: 3,
    });
    expect(answer.body).toMatchObject({
      success: true,
      message: 'Channel updated',
      data: {
        id: created.id,
        key: '',
        name: 'renamed',
        type: 14,
        models: 'claude-sonnet-4-20250514',
        group: 'vip',
        base_url: 'https://api.anthropic.com',
        tag: null,
        priority: 3,
        status: 1,
        warnings: [],
      },
    });
    expect(await abilities(created.id)).toEqual([
      { group: 'vip', model: 'claude-sonnet-4-20250514', enabled: true, priority: 3, weight: 0, tag: null },
    ]);
  });

  it('takes {id, status}, {id, priority} and {id, weight} alone, and answers the status', async () => {
    const created = await create({ groups: ['default', 'vip'], priority: 1, weight: 2 });
    const disabled = await root.put('/api/channel/', { id: created.id, status: 2 });
    expect(disabled.body.data).toMatchObject({ status: 2, priority: 1, weight: 2, name: created.name });
    expect((await abilities(created.id)).every((a) => a.enabled === false)).toBe(true);
    await root.put('/api/channel/', { id: created.id, priority: -5 });
    await root.put('/api/channel/', { id: created.id, weight: 9 });
    const enabled = await root.put('/api/channel/', { id: created.id, status: 1 });
    expect(enabled.body.data).toMatchObject({ status: 1, priority: -5, weight: 9, models: created.models });
    const rows = await abilities(created.id);
    expect(rows).toHaveLength(4);
    expect(rows.every((a) => a.enabled && a.priority === -5 && a.weight === 9)).toBe(true);
  });

  it('keeps the key when the key is empty and replaces or appends it when given', async () => {
    const created = await create();
    const before = (await row(created.id)).key_encrypted;
    await root.put('/api/channel/', { id: created.id, key: '', name: 'same-key' });
    expect((await row(created.id)).key_encrypted).toBe(before);
    const replacement = secret();
    await root.put('/api/channel/', { id: created.id, key: replacement });
    const after = await row(created.id);
    expect(after.key_encrypted).not.toBe(before);
    expect(after.key_encrypted).not.toContain(replacement);
    const appended = await root.put('/api/channel/', { id: created.id, key: secret(), key_mode: 'append' });
    expect(appended.body.data.channel_info).toMatchObject({ is_multi_key: true, multi_key_size: 2 });
  });

  it.each([
    ['an empty model list', { models: '' }, 200, 'CHANNEL_MODELS_REQUIRED'],
    ['an empty name', { name: ' ' }, 200, 'CHANNEL_NAME_EMPTY'],
    ['a bad model mapping', { model_mapping: 'x' }, 200, 'CHANNEL_MODEL_MAPPING_INVALID'],
    ['a negative weight', { weight: -2 }, 200, 'CHANNEL_WEIGHT_INVALID'],
    ['a fractional priority', { priority: 0.1 }, 200, 'CHANNEL_PRIORITY_NOT_INTEGER'],
    ['status 0', { status: 0 }, 200, 'INVALID_REQUEST'],
  ])('refuses %s and changes nothing', async (_name, changes, status, code) => {
    const created = await create();
    const before = await row(created.id);
    const answer = await root.put('/api/channel/', { id: created.id, ...changes });
    expect(answer.status).toBe(status);
    expect(answer.body).toMatchObject({ success: false, code });
    expect(await row(created.id)).toEqual(before);
  });

  it('refuses an update without an id, and of an unknown channel', async () => {
    expect((await root.put('/api/channel/', { name: 'x' })).body.code).toBe('INVALID_REQUEST');
    const answer = await root.put('/api/channel/', { id: 999999, status: 2 });
    expect(answer.status).toBe(200);
    expect(answer.body.code).toBe('CHANNEL_NOT_FOUND');
  });

  it('flags a /v1 base URL on update too', async () => {
    const created = await create();
    const answer = await root.put('/api/channel/', { id: created.id, base_url: 'https://x.example/v1' });
    expect(answer.body.data.warnings).toEqual(['base_url_ends_with_v1']);
  });
});

describe('list and search', () => {
  let ids: Record<string, number>;

  beforeAll(async () => {
    await clearChannels();
    ids = {};
    const add = async (name: string, extra: Record<string, unknown>) => {
      ids[name] = (await create({ name, ...extra })).id;
    };
    await add('alpha', { priority: 10, models: 'gpt-4o', group: 'default', base_url: 'https://alpha.example' });
    await add('beta', { priority: 5, models: 'claude-x', group: 'vip', tag: 'team-b' });
    await add('gamma', { priority: 5, models: 'claude-y', group: 'default,vip', tag: 'team-b', status: 2 });
    await add('delta', { priority: 1, models: 'gemini-z', group: 'svip', type: 24, tag: 'team-d' });
    await add('epsilon', { priority: 20, models: 'gpt-4o-mini', group: 'default', status: 3 });
  });

  const names = (answer: Answer) => answer.body.data.items.map((c: { name: string }) => c.name);

  it('lists by priority (highest first) by default, by id with id_sort, in pages', async () => {
    const answer = await admin.get('/api/channel/?p=1&page_size=10');
    expect(answer.body.data).toMatchObject({ total: 5, page: 1, page_size: 10 });
    expect(names(answer)).toEqual(['epsilon', 'alpha', 'gamma', 'beta', 'delta']);
    expect(answer.body.data.items.every((c: { key: string }) => c.key === '')).toBe(true);
    expect(names(await admin.get('/api/channel/?id_sort=true'))).toEqual([
      'epsilon',
      'delta',
      'gamma',
      'beta',
      'alpha',
    ]);
    const second = await admin.get('/api/channel/?p=2&page_size=2&id_sort=true');
    expect(second.body.data).toMatchObject({ total: 5, page: 2, page_size: 2 });
    expect(names(second)).toEqual(['gamma', 'beta']);
  });

  it('counts channels per type and filters by type and status', async () => {
    const answer = await admin.get('/api/channel/');
    expect(answer.body.data.type_counts).toEqual({ 1: 4, 24: 1 });
    expect(names(await admin.get('/api/channel/?type=24'))).toEqual(['delta']);
    expect(names(await admin.get('/api/channel/?status=enabled&id_sort=true'))).toEqual(['delta', 'beta', 'alpha']);
    expect(names(await admin.get('/api/channel/?status=disabled&id_sort=true'))).toEqual(['epsilon', 'gamma']);
    expect(names(await admin.get('/api/channel/?status=3'))).toEqual(['epsilon']);
  });

  it('searches by id, name, base URL and tag', async () => {
    expect(names(await admin.get('/api/channel/search?keyword=alp'))).toEqual(['alpha']);
    expect(names(await admin.get(`/api/channel/search?keyword=${ids.delta}`))).toEqual(['delta']);
    expect(names(await admin.get('/api/channel/search?keyword=alpha.example'))).toEqual(['alpha']);
    expect(names(await admin.get('/api/channel/search?keyword=team-b&id_sort=true'))).toEqual(['gamma', 'beta']);
    expect(names(await admin.get('/api/channel/search?keyword=nothing-like-this'))).toEqual([]);
  });

  it('never finds a channel by its key', async () => {
    const stored = await row(ids.alpha as number);
    expect(stored.key_encrypted).toBeTruthy();
    // The key of every channel begins "sk-good": a search by key text finds none of them.
    const answer = await admin.get('/api/channel/search?keyword=sk-good');
    expect(answer.body.data.total).toBe(0);
  });

  it('filters by group (a whole group name) and by model (part of a name)', async () => {
    expect(names(await admin.get('/api/channel/search?group=vip&id_sort=true'))).toEqual(['gamma', 'beta']);
    expect(names(await admin.get('/api/channel/search?group=vi'))).toEqual([]);
    expect(names(await admin.get('/api/channel/search?model=claude&id_sort=true'))).toEqual(['gamma', 'beta']);
    expect(names(await admin.get('/api/channel/search?model=gpt-4o&id_sort=true'))).toEqual(['epsilon', 'alpha']);
    expect(names(await admin.get('/api/channel/search?keyword=l&group=default&model=gpt&id_sort=true'))).toEqual([
      'epsilon',
      'alpha',
    ]);
  });

  it('in tag mode, pages over tags and untagged channels, each tag’s channels together', async () => {
    const answer = await admin.get('/api/channel/?tag_mode=true&page_size=2');
    // Units by highest priority: epsilon (20), alpha (10), then team-b (5), then team-d (1).
    expect(answer.body.data.total).toBe(4);
    expect(names(answer)).toEqual(['epsilon', 'alpha']);
    const second = await admin.get('/api/channel/?tag_mode=true&page_size=2&p=2');
    expect(names(second)).toEqual(['gamma', 'beta', 'delta']);
    const byId = await admin.get('/api/channel/?tag_mode=true&id_sort=true&page_size=3');
    expect(names(byId)).toEqual(['epsilon', 'delta', 'gamma', 'beta']);
    const searched = await admin.get('/api/channel/search?tag_mode=true&keyword=team');
    expect(searched.body.data.total).toBe(2);
  });

  it('refuses a page size that is not a number', async () => {
    expect((await admin.get('/api/channel/?page_size=many')).body.code).toBe('INVALID_REQUEST');
  });
});

describe('models', () => {
  it('lists the models known per channel type, each once', async () => {
    const answer = await admin.get('/api/channel/models');
    const models: Array<{ id: string; owned_by: string }> = answer.body.data;
    expect(models).toContainEqual(expect.objectContaining({ id: 'gpt-4o', owned_by: 'OpenAI' }));
    expect(models).toContainEqual(expect.objectContaining({ id: 'claude-sonnet-4-20250514', owned_by: 'Anthropic' }));
    expect(models).toContainEqual(expect.objectContaining({ id: 'gemini-2.5-pro', owned_by: 'Gemini' }));
    expect(models).toContainEqual(expect.objectContaining({ id: 'deepseek-chat', owned_by: 'DeepSeek' }));
    expect(models).toContainEqual(expect.objectContaining({ id: 'SparkDesk-v3.5', owned_by: 'Xunfei' }));
    expect(models).toContainEqual(expect.objectContaining({ id: 'mj_imagine', owned_by: 'Midjourney' }));
    expect(models).toContainEqual(expect.objectContaining({ id: 'suno_music', owned_by: 'SunoAPI' }));
    // Types Tollgate does not speak (MokaAI 44) lend the picker no models.
    expect(models.map((m) => m.id)).not.toContain('m3e-large');
    expect(new Set(models.map((m) => m.id)).size).toBe(models.length);
  });

  it('lists the distinct models of enabled channels only', async () => {
    await create({ models: 'enabled-model,shared-model' });
    await create({ models: 'enabled-model' });
    await create({ models: 'disabled-model,shared-model', status: 2 });
    const models: string[] = (await admin.get('/api/channel/models_enabled')).body.data;
    expect(models).toContain('enabled-model');
    expect(models).toContain('shared-model');
    expect(models).not.toContain('disabled-model');
    expect(models.filter((m) => m === 'enabled-model')).toHaveLength(1);
  });

  it('answers the longest model list of a tag', async () => {
    await create({ tag: 'models-tag', models: 'a' });
    await create({ tag: 'models-tag', models: 'a,b,c' });
    expect((await admin.get('/api/channel/tag/models?tag=models-tag')).body.data).toBe('a,b,c');
    expect((await admin.get('/api/channel/tag/models?tag=no-such-tag')).body.data).toBe('');
  });
});

describe('delete', () => {
  it('deletes a channel and its abilities, with or without the trailing slash', async () => {
    const first = await create();
    const second = await create();
    const answer = await admin.delete(`/api/channel/${first.id}/`);
    expect(answer.body).toEqual({ success: true, message: 'Channel deleted' });
    expect((await admin.delete(`/api/channel/${second.id}`)).body.success).toBe(true);
    expect(await db().selectFrom('channels').select('id').where('id', 'in', [first.id, second.id]).execute()).toEqual(
      [],
    );
    expect(await abilities(first.id)).toEqual([]);
    expect(await abilities(second.id)).toEqual([]);
  });

  it('says an unknown channel is not found', async () => {
    const answer = await admin.delete('/api/channel/999999');
    expect(answer.status).toBe(200);
    expect(answer.body.code).toBe('CHANNEL_NOT_FOUND');
  });

  it('deletes every disabled channel (status 2 and 3) and answers the count', async () => {
    await clearChannels();
    const enabled = await create();
    await create({ status: 2 });
    await create({ status: 3 });
    const answer = await admin.delete('/api/channel/disabled');
    expect(answer.body).toMatchObject({ success: true, data: 2 });
    expect((await db().selectFrom('channels').select('id').execute()).map((r) => r.id)).toEqual([enabled.id]);
  });

  it('deletes a batch and answers the count; unknown ids count nothing', async () => {
    const a = await create();
    const b = await create();
    const keep = await create();
    const answer = await admin.post('/api/channel/batch', { ids: [a.id, b.id, 999999] });
    expect(answer.body).toMatchObject({ success: true, data: 2 });
    expect(await db().selectFrom('channels').select('id').where('id', 'in', [a.id, b.id, keep.id]).execute()).toEqual([
      { id: keep.id },
    ]);
    expect(await abilities(a.id)).toEqual([]);
  });

  it('refuses an empty batch in the spec’s words, and a batch that is not a list', async () => {
    const empty = await root.call('POST', '/api/channel/batch', { ids: [] }, zh);
    expect(empty.status).toBe(200);
    expect(empty.body).toMatchObject({ code: 'CHANNEL_DELETE_SELECTION_EMPTY', message: '请先选择要删除的通道！' });
    expect((await root.post('/api/channel/batch', { ids: 'all' })).body.code).toBe('INVALID_REQUEST');
  });
});

describe('fix abilities', () => {
  it('rebuilds the whole abilities table from the channels and answers the channel count', async () => {
    const a = await create({ groups: ['default', 'vip'], models: 'm1,m2', priority: 4, tag: 'fix' });
    const b = await create({ status: 2, models: 'm3' });
    await db().deleteFrom('abilities').where('channel_id', '=', a.id).execute();
    await db().updateTable('abilities').set({ enabled: true, weight: 99 }).where('channel_id', '=', b.id).execute();
    await db()
      .insertInto('abilities')
      .values({ group: 'ghost', model: 'ghost', channel_id: b.id, enabled: true })
      .execute();
    const answer = await admin.post('/api/channel/fix');
    expect(answer.body).toMatchObject({ success: true, data: { success: await channelCount(), fails: 0 } });
    expect(await abilities(a.id)).toEqual([
      { group: 'default', model: 'm1', enabled: true, priority: 4, weight: 0, tag: 'fix' },
      { group: 'default', model: 'm2', enabled: true, priority: 4, weight: 0, tag: 'fix' },
      { group: 'vip', model: 'm1', enabled: true, priority: 4, weight: 0, tag: 'fix' },
      { group: 'vip', model: 'm2', enabled: true, priority: 4, weight: 0, tag: 'fix' },
    ]);
    expect(await abilities(b.id)).toEqual([
      { group: 'default', model: 'm3', enabled: false, priority: 0, weight: 0, tag: null },
    ]);
  });
});

describe('copy', () => {
  it('copies configuration and key under a new id with the "_复制" suffix, balance reset', async () => {
    const source = await create({ base_url: upstreamUrl, tag: 'copy-src', groups: ['default', 'vip'], priority: 2 });
    await db().updateTable('channels').set({ balance: 12.5, used_quota: 1000 }).where('id', '=', source.id).execute();
    const answer = await admin.post(`/api/channel/copy/${source.id}`);
    expect(answer.body).toMatchObject({
      success: true,
      message: 'Channel copied',
      data: {
        name: `${source.name}_复制`,
        key: '',
        base_url: upstreamUrl,
        tag: 'copy-src',
        group: 'default,vip',
        priority: 2,
        balance: 0,
        used_quota: 0,
      },
    });
    const copyId = answer.body.data.id;
    expect(copyId).not.toBe(source.id);
    expect(await abilities(copyId)).toEqual(await abilities(source.id));
    // Same key: the upstream sees the same bearer for both.
    upstreamRequests.length = 0;
    await admin.get(`/api/channel/fetch_models/${source.id}`);
    await admin.get(`/api/channel/fetch_models/${copyId}`);
    expect(upstreamRequests).toHaveLength(2);
    expect(upstreamRequests[0]?.headers.authorization).toBe(upstreamRequests[1]?.headers.authorization);
    expect((await row(copyId)).key_encrypted).not.toBe((await row(source.id)).key_encrypted);
  });

  it('takes another suffix and can keep the balance', async () => {
    const source = await create();
    await db().updateTable('channels').set({ balance: 3 }).where('id', '=', source.id).execute();
    const answer = await admin.post(`/api/channel/copy/${source.id}?suffix=-2&reset_balance=false`);
    expect(answer.body.data).toMatchObject({ name: `${source.name}-2`, balance: 3 });
  });

  it('says an unknown channel is not found', async () => {
    expect((await admin.post('/api/channel/copy/999999')).body.code).toBe('CHANNEL_NOT_FOUND');
  });
});

describe('tags', () => {
  it('tags a batch of channels and their abilities; null clears the tag', async () => {
    const a = await create();
    const b = await create();
    const answer = await admin.post('/api/channel/batch/tag', { ids: [a.id, b.id, 999999], tag: ' batch-tag ' });
    expect(answer.body).toMatchObject({ success: true, data: 2 });
    expect((await row(a.id)).tag).toBe('batch-tag');
    expect((await abilities(b.id)).every((r) => r.tag === 'batch-tag')).toBe(true);
    await admin.post('/api/channel/batch/tag', { ids: [a.id], tag: null });
    expect((await row(a.id)).tag).toBeNull();
    expect((await abilities(a.id)).every((r) => r.tag === null)).toBe(true);
  });

  it('refuses batch tagging without a selection or with an empty tag', async () => {
    const a = await create();
    const empty = await root.call('POST', '/api/channel/batch/tag', { ids: [a.id], tag: '  ' }, zh);
    expect(empty.body).toMatchObject({ code: 'CHANNEL_TAG_REQUIRED', message: '标签不能为空！' });
    const none = await root.post('/api/channel/batch/tag', { ids: [], tag: 'x' });
    expect(none.body.code).toBe('CHANNEL_TAG_SELECTION_EMPTY');
    expect((await row(a.id)).tag).toBeNull();
  });

  it('edits every channel of a tag: priority, weight, models, groups, mapping, then renames and dissolves', async () => {
    const a = await create({ tag: 'edit-tag', models: 'x1' });
    const b = await create({ tag: 'edit-tag', models: 'x2', status: 2 });
    const other = await create({ tag: 'other-tag', priority: 1 });
    const edited = await admin.put('/api/channel/tag', { tag: 'edit-tag', priority: 8, weight: 3 });
    expect(edited.body).toMatchObject({ success: true, message: 'Tag updated', data: 2 });
    for (const id of [a.id, b.id]) {
      expect(await row(id)).toMatchObject({ priority: 8, weight: 3, tag: 'edit-tag' });
      expect((await abilities(id)).every((r) => r.priority === 8 && r.weight === 3)).toBe(true);
    }
    expect((await row(other.id)).priority).toBe(1);

    await admin.put('/api/channel/tag', {
      tag: 'edit-tag',
      models: 'y1,y2',
      groups: 'default,vip',
      model_mapping: '{"y1":"z1"}',
      priority: null,
      weight: null,
    });
    expect(await row(a.id)).toMatchObject({ models: 'y1,y2', group: 'default,vip', model_mapping: '{"y1":"z1"}' });
    expect((await abilities(b.id)).map((r) => `${r.group}/${r.model}/${r.enabled}`)).toEqual([
      'default/y1/false',
      'default/y2/false',
      'vip/y1/false',
      'vip/y2/false',
    ]);

    await admin.put('/api/channel/tag', { tag: 'edit-tag', new_tag: 'renamed-tag' });
    expect((await row(a.id)).tag).toBe('renamed-tag');
    expect((await abilities(a.id)).every((r) => r.tag === 'renamed-tag')).toBe(true);

    await admin.put('/api/channel/tag', { tag: 'renamed-tag', new_tag: '' });
    expect((await row(a.id)).tag).toBeNull();
    expect((await row(b.id)).tag).toBeNull();
    expect((await abilities(b.id)).every((r) => r.tag === null)).toBe(true);
  });

  it.each([
    ['nothing to change', { new_tag: 'same-tag', models: '', groups: [], model_mapping: '' }, '没有任何修改！'],
    ['a fractional priority', { priority: 2.5 }, '优先级必须是整数！'],
    ['a negative weight', { weight: -1 }, '权重必须是非负整数！'],
    ['a fractional weight', { weight: 1.5 }, '权重必须是非负整数！'],
    ['a bad model mapping', { model_mapping: '[]' }, '模型映射必须是合法的 JSON 格式！'],
  ])('refuses a tag edit with %s in the spec’s words', async (_name, edit, message) => {
    const a = await create({ tag: 'same-tag', priority: 4 });
    const before = await row(a.id);
    const answer = await root.call('PUT', '/api/channel/tag', { tag: 'same-tag', ...edit }, zh);
    expect(answer.status).toBe(200);
    expect(answer.body.message).toBe(message);
    expect(await row(a.id)).toEqual(before);
  });

  it('refuses a tag edit of an unknown tag or without a tag', async () => {
    const unknown = await root.put('/api/channel/tag', { tag: 'no-such-tag', priority: 1 });
    expect(unknown.status).toBe(200);
    expect(unknown.body.code).toBe('CHANNEL_TAG_NOT_FOUND');
    expect((await root.put('/api/channel/tag', { tag: ' ', priority: 1 })).body.code).toBe('CHANNEL_TAG_REQUIRED');
    expect((await root.put('/api/channel/tag', { priority: 1 })).body.code).toBe('INVALID_REQUEST');
  });

  it('enables and disables every channel of a tag, abilities included', async () => {
    const a = await create({ tag: 'switch-tag' });
    const b = await create({ tag: 'switch-tag', status: 3 });
    const c = await create({ tag: 'other-switch' });
    const disabled = await admin.post('/api/channel/tag/disabled', { tag: 'switch-tag' });
    expect(disabled.body).toMatchObject({ success: true, data: 2 });
    expect((await row(a.id)).status).toBe(2);
    expect((await row(b.id)).status).toBe(2);
    expect((await row(c.id)).status).toBe(1);
    expect((await abilities(a.id)).every((r) => !r.enabled)).toBe(true);
    await admin.post('/api/channel/tag/enabled', { tag: 'switch-tag' });
    expect((await row(b.id)).status).toBe(1);
    expect((await abilities(b.id)).every((r) => r.enabled)).toBe(true);
    const unknown = await admin.post('/api/channel/tag/enabled', { tag: 'no-such-tag' });
    expect(unknown.body.code).toBe('CHANNEL_TAG_NOT_FOUND');
  });
});

describe('fetch upstream models', () => {
  it('asks a saved channel’s upstream with its key and answers the sorted, distinct ids', async () => {
    const key = secret();
    const created = await create({ key, base_url: upstreamUrl });
    upstreamRequests.length = 0;
    const answer = await admin.get(`/api/channel/fetch_models/${created.id}`);
    expect(answer.body).toEqual({ success: true, message: '', data: ['mock-a', 'mock-b'] });
    expect(upstreamRequests).toHaveLength(1);
    expect(upstreamRequests[0]?.url).toBe('/v1/models');
    expect(upstreamRequests[0]?.headers.authorization).toBe(`Bearer ${key}`);
  });

  it('uses the first key of a multi-key channel, and does not double /v1', async () => {
    const [first, second] = [secret(), secret()];
    const created = await create({ key: `${first}\n${second}`, base_url: `${upstreamUrl}/v1` });
    upstreamRequests.length = 0;
    expect((await admin.get(`/api/channel/fetch_models/${created.id}`)).body.data).toEqual(['mock-a', 'mock-b']);
    expect(upstreamRequests[0]).toMatchObject({ url: '/v1/models', headers: { authorization: `Bearer ${first}` } });
  });

  it('asks for an unsaved channel (root) with the form’s base URL, type and key', async () => {
    const key = secret();
    const openai = await root.post('/api/channel/fetch_models', { base_url: `${upstreamUrl}/`, type: 1, key });
    expect(openai.body.data).toEqual(['mock-a', 'mock-b']);
    const ali = await root.post('/api/channel/fetch_models', { base_url: upstreamUrl, type: 17, key });
    expect(ali.body.data).toEqual(['mock-a', 'mock-b']);
    expect(upstreamRequests.at(-1)?.url).toBe('/compatible-mode/v1/models');
  });

  it('speaks Anthropic, Gemini and Ollama', async () => {
    const key = secret();
    upstreamRequests.length = 0;
    const claude = await root.post('/api/channel/fetch_models', { base_url: upstreamUrl, type: 14, key });
    expect(claude.body.data).toEqual(['claude-mock-1', 'claude-mock-2']);
    expect(upstreamRequests[0]?.headers).toMatchObject({ 'x-api-key': key, 'anthropic-version': '2023-06-01' });
    expect(upstreamRequests[0]?.headers.authorization).toBeUndefined();
    const gemini = await root.post('/api/channel/fetch_models', { base_url: upstreamUrl, type: 24, key });
    expect(gemini.body.data).toEqual(['gemini-mock', 'gemini-mock-pro']);
    expect(upstreamRequests[1]?.headers['x-goog-api-key']).toBe(key);
    expect(upstreamRequests[1]?.url).not.toContain(key);
    const ollama = await root.post('/api/channel/fetch_models', { base_url: upstreamUrl, type: 4, key });
    expect(ollama.body.data).toEqual(['llama-mock']);
  });

  it('needs a key for an unsaved channel, in the spec’s words', async () => {
    const answer = await root.call('POST', '/api/channel/fetch_models', { base_url: upstreamUrl, type: 1 }, zh);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ code: 'CHANNEL_FETCH_KEY_REQUIRED', message: '请填写密钥' });
  });

  it('says clearly when the upstream is down, never a 500', async () => {
    const answer = await root.post('/api/channel/fetch_models', { base_url: deadUrl, type: 1, key: secret() });
    expect(answer.status).toBe(200);
    expect(answer.body.code).toBe('UPSTREAM_UNREACHABLE');
    expect(answer.body.message).toContain(deadUrl);
    expect(answer.body.message).toContain('ECONNREFUSED');
  });

  it('passes on the upstream’s refusal without the key it echoed', async () => {
    const key = secret('sk-bad');
    const created = await create({ key, base_url: upstreamUrl });
    const answer = await admin.get(`/api/channel/fetch_models/${created.id}`);
    expect(answer.status).toBe(200);
    expect(answer.body.code).toBe('UPSTREAM_REFUSED');
    expect(answer.body.message).toContain('HTTP 401');
    expect(answer.body.message).toContain('Incorrect API key provided: ***');
    expect(answer.body.message).not.toContain(key);
  });

  it.each([
    ['not JSON', '/bad-json'],
    ['JSON of another shape', '/wrong-shape'],
  ])('says the list is unreadable when the upstream answers %s', async (_name, path) => {
    const answer = await root.post('/api/channel/fetch_models', {
      base_url: upstreamUrl + path,
      type: 1,
      key: secret(),
    });
    expect(answer.status).toBe(200);
    expect(answer.body.code).toBe('UPSTREAM_MODELS_UNREADABLE');
  });

  it('refuses types that cannot list models, unknown types, and a missing base URL', async () => {
    const minimax = await root.post('/api/channel/fetch_models', { type: 35, key: secret() });
    expect(minimax.body.code).toBe('CHANNEL_FETCH_UNSUPPORTED');
    expect((await root.post('/api/channel/fetch_models', { type: 999, key: secret() })).body.code).toBe(
      'CHANNEL_TYPE_UNKNOWN',
    );
    const xinference = await root.post('/api/channel/fetch_models', { type: 47, key: secret() });
    expect(xinference.body.code).toBe('CHANNEL_FETCH_BASE_URL_REQUIRED');
    const badUrl = await root.post('/api/channel/fetch_models', { base_url: 'file:///etc', key: secret() });
    expect(badUrl.body.code).toBe('CHANNEL_BASE_URL_INVALID');
    expect((await admin.get('/api/channel/fetch_models/999999')).body.code).toBe('CHANNEL_NOT_FOUND');
  });
});

describe('managed channels', () => {
  let managed: any;

  beforeEach(async () => {
    managed = await create({ tag: 'managed-tag', base_url: upstreamUrl });
    await setManaged(managed.id);
  });

  it('shows who manages the channel', async () => {
    const answer = await admin.get(`/api/channel/${managed.id}`);
    expect(answer.body.data).toMatchObject({
      managed_by: 'tollgate-operator',
      managed_namespace: 'ai',
      managed_name: `openai-${managed.id}`,
    });
  });

  it('refuses configuration edits naming the resource, and changes nothing', async () => {
    const before = await row(managed.id);
    const answer = await admin.put('/api/channel/', { id: managed.id, name: 'hijacked', priority: 9 });
    expect(answer.status).toBe(200);
    expect(answer.body.code).toBe('MANAGED_BY_RESOURCE');
    expect(answer.body.message).toContain(`Channel ai/openai-${managed.id}`);
    expect(answer.body.message).toContain('name');
    const key = await admin.put('/api/channel/', { id: managed.id, key: secret() });
    expect(key.status).toBe(200);
    expect(key.body.message).toContain('key');
    expect(await row(managed.id)).toEqual(before);
  });

  it('accepts a save that changes nothing (the console sends every field)', async () => {
    const answer = await admin.put('/api/channel/', { ...managed, key: '', warnings: undefined, ids: undefined });
    expect(answer.status).toBe(200);
  });

  it('refuses manual enable/disable, but lets an auto-disabled channel be re-enabled', async () => {
    const disable = await admin.put('/api/channel/', { id: managed.id, status: 2 });
    expect(disable.status).toBe(200);
    expect((await row(managed.id)).status).toBe(1);
    await db().updateTable('channels').set({ status: 3 }).where('id', '=', managed.id).execute();
    const enable = await admin.put('/api/channel/', { id: managed.id, status: 1 });
    expect(enable.status).toBe(200);
    expect(enable.body.data.status).toBe(1);
    expect((await abilities(managed.id)).every((r) => r.enabled)).toBe(true);
  });

  it('refuses deleting it, alone or in a batch (and then deletes none of the batch)', async () => {
    const free = await create();
    expect(refusalOf(await admin.delete(`/api/channel/${managed.id}`))).toMatchObject({ status: 200, success: false });
    const batch = await admin.post('/api/channel/batch', { ids: [free.id, managed.id] });
    expect(batch.status).toBe(200);
    expect(batch.body.message).toContain(`ai/openai-${managed.id}`);
    expect(await row(free.id)).toBeTruthy();
    expect(await row(managed.id)).toBeTruthy();
  });

  it('is left alone by "delete disabled"', async () => {
    await db().updateTable('channels').set({ status: 2 }).where('id', '=', managed.id).execute();
    await admin.delete('/api/channel/disabled');
    expect((await row(managed.id)).status).toBe(2);
  });

  it('refuses tag edits, batch tagging and tag-wide disabling that would change it', async () => {
    expect(refusalOf(await admin.put('/api/channel/tag', { tag: 'managed-tag', priority: 5 }))).toMatchObject({
      status: 200,
      success: false,
    });
    expect(refusalOf(await admin.post('/api/channel/batch/tag', { ids: [managed.id], tag: 'other' }))).toMatchObject({
      status: 200,
      success: false,
    });
    expect(refusalOf(await admin.post('/api/channel/tag/disabled', { tag: 'managed-tag' }))).toMatchObject({
      status: 200,
      success: false,
    });
    expect(await row(managed.id)).toMatchObject({ priority: 0, tag: 'managed-tag', status: 1 });
  });

  it('still serves runtime operations: fetching models, copying (the copy is unmanaged), fixing abilities', async () => {
    expect((await admin.get(`/api/channel/fetch_models/${managed.id}`)).body.data).toEqual(['mock-a', 'mock-b']);
    const copy = await admin.post(`/api/channel/copy/${managed.id}`);
    expect(copy.body.data).toMatchObject({ managed_by: null, managed_name: null });
    expect((await admin.put('/api/channel/', { id: copy.body.data.id, name: 'free-copy' })).status).toBe(200);
    expect((await admin.post('/api/channel/fix')).status).toBe(200);
  });
});

describe('secrecy', () => {
  it('never answered a key, and never stored one in the clear', async () => {
    expect(watch.secrets.length).toBeGreaterThan(50);
    expect(watch.answers.length).toBeGreaterThan(100);
    expect(watch.leaks()).toEqual([]);
    const rows = await db().selectFrom('channels').select('key_encrypted').execute();
    expect(rows.length).toBeGreaterThan(0);
    for (const { key_encrypted } of rows) {
      expect(key_encrypted).toMatch(/^v1:/);
      expect(watch.secrets.some((key) => key_encrypted.includes(key))).toBe(false);
    }
  });
});
