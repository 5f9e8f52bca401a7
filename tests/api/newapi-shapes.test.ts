import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { clientsFrom, type DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase, hasPostgres } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';

// What new-api's own web front end (QuantumNous/new-api web/, classic and default) reads from and sends
// to /api. Refusals are checked by `success` and `code` only: their HTTP status is being changed.

let gateway: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;
const { client, user } = clientsFrom(() => gateway.url, '10.13.0');
let counter = 0;

beforeAll(async () => {
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(gatewayEnv(database.options, testNamespace(), { TRUST_PROXY: 'true' }));
  root = await setupRoot(gateway.url);
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
});

const db = () => gateway.store.db;
const userRow = (username: string) =>
  db().selectFrom('users').selectAll().where('username', '=', username).executeTakeFirst();

async function admin(username: string): Promise<DashboardClient> {
  const c = await user(username);
  expect((await root.post('/api/user/manage', { id: c.userId, action: 'promote' })).body.success).toBe(true);
  return c;
}

async function createChannel(extra: Record<string, unknown> = {}): Promise<any> {
  const answer = await root.post('/api/channel/', {
    name: `shape-${++counter}`,
    key: `sk-shape-${counter}`,
    models: 'gpt-4o-mini',
    ...extra,
  });
  expect(answer.body, JSON.stringify(answer.body)).toMatchObject({ success: true });
  return answer.body.data;
}
const getChannel = async (id: number) => (await root.get(`/api/channel/${id}`)).body.data;

/** The JSON-valued channel fields new-api's front end reads as strings and JSON.parses. */
const JSON_FIELDS = [
  'model_mapping',
  'status_code_mapping',
  'setting',
  'settings',
  'param_override',
  'header_override',
  'other_info',
] as const;

describe('null means absent (web/src/components/auth/RegisterForm.jsx sends aff_code: null)', () => {
  it('registers with the classic front end’s exact payload, aff_code null and empty extras', async () => {
    const answer = await client().post('/api/user/register', {
      username: 'nullaff',
      password: 'password-1',
      password2: 'password-1',
      email: '',
      verification_code: '',
      wechat_verification_code: '',
      aff_code: null,
    });
    expect(answer.body).toMatchObject({ success: true });
    expect(await userRow('nullaff')).toMatchObject({ inviter_id: 0, role: 1 });
  });

  it('treats a null required field as missing, and still refuses a value of the wrong type', async () => {
    const missing = await client().post('/api/user/register', { username: null, password: 'password-1' });
    expect(missing.body).toMatchObject({ success: false, code: 'USERNAME_AND_PASSWORD_REQUIRED' });
    const wrongType = await client().post('/api/user/register', {
      username: 'typed',
      password: 'password-1',
      aff_code: 5,
    });
    expect(wrongType.body).toMatchObject({ success: false, code: 'INVALID_REQUEST' });
    expect(await userRow('typed')).toBeUndefined();
  });

  it('keeps a field sent as null unchanged, at any depth (new-api’s wrapped channel create)', async () => {
    const c = await user('keepname');
    expect((await c.put('/api/user/self', { display_name: 'Kept', password: null })).body.success).toBe(true);
    expect((await c.put('/api/user/self', { display_name: null })).body.success).toBe(true);
    expect((await userRow('keepname'))?.display_name).toBe('Kept');

    const wrapped = await root.post('/api/channel/', {
      mode: 'single',
      multi_key_mode: null,
      channel: {
        name: 'wrapped',
        key: 'sk-wrapped',
        models: 'gpt-4o-mini',
        tag: null,
        test_model: null,
        priority: null,
      },
    });
    expect(wrapped.body, JSON.stringify(wrapped.body)).toMatchObject({
      success: true,
      data: { name: 'wrapped', tag: null, test_model: null, priority: 0 },
    });
  });
});

describe('JSON channel fields are text (web/src/components/table/channels/modals/EditChannelModal.jsx)', () => {
  it('answers every JSON field as a string, "" when unset, never null', async () => {
    const created = await createChannel();
    for (const view of [created, await getChannel(created.id)]) {
      for (const field of JSON_FIELDS) expect(view[field], field).toBe('');
    }
    const listed = (await root.get('/api/channel/?p=1&page_size=100')).body.data.items.find(
      (c: { id: number }) => c.id === created.id,
    );
    for (const field of JSON_FIELDS) expect(listed[field], field).toBe('');
  });

  it('takes back what it answered, and "", "null", "{}" and {} all mean no value', async () => {
    const created = await createChannel({ model_mapping: '{"a":"b"}', param_override: { temperature: 0 } });
    expect(created.model_mapping).toBe('{"a":"b"}');
    expect(JSON.parse(created.param_override)).toEqual({ temperature: 0 });

    // The front end sends the whole record back, as read (and "null" for a mapping it read as null).
    const saved = await root.put('/api/channel/', { ...(await getChannel(created.id)), name: 'renamed' });
    expect(saved.body).toMatchObject({ success: true, data: { name: 'renamed', model_mapping: '{"a":"b"}' } });

    for (const empty of ['', 'null', '{}', {}, ' null ']) {
      await root.put('/api/channel/', { id: created.id, model_mapping: '{"x":"y"}' });
      const cleared = await root.put('/api/channel/', {
        id: created.id,
        model_mapping: empty,
        status_code_mapping: empty,
        setting: empty,
        settings: empty,
        param_override: empty,
        header_override: empty,
      });
      expect(cleared.body, JSON.stringify(empty)).toMatchObject({ success: true });
      const view = await getChannel(created.id);
      for (const field of JSON_FIELDS) expect(view[field], `${field} after ${JSON.stringify(empty)}`).toBe('');
      const stored = await db()
        .selectFrom('channels')
        .selectAll()
        .where('id', '=', created.id)
        .executeTakeFirstOrThrow();
      expect(stored.model_mapping).toBeNull();
    }
  });

  it('clears text fields with "" and leaves them alone with null (the console sends "")', async () => {
    const created = await createChannel({ tag: 'before', test_model: 'gpt-4o-mini', model_mapping: '{"a":"b"}' });
    await root.put('/api/channel/', { id: created.id, tag: null, test_model: null, model_mapping: null });
    expect(await getChannel(created.id)).toMatchObject({
      tag: 'before',
      test_model: 'gpt-4o-mini',
      model_mapping: '{"a":"b"}',
    });
    await root.put('/api/channel/', { id: created.id, tag: '', test_model: '', model_mapping: '' });
    expect(await getChannel(created.id)).toMatchObject({ tag: null, test_model: null, model_mapping: '' });
  });

  it.each([
    ['a mapping that is a list', { model_mapping: '[1]' }, 'CHANNEL_MODEL_MAPPING_INVALID'],
    ['a mapping object to a number', { model_mapping: { a: 1 } }, 'CHANNEL_MODEL_MAPPING_INVALID'],
    ['a header override that is a number', { header_override: '5' }, 'CHANNEL_JSON_FIELD_INVALID'],
    ['a param override that is no JSON', { param_override: '{' }, 'CHANNEL_JSON_FIELD_INVALID'],
    ['a setting that is a list', { setting: [1] }, 'INVALID_REQUEST'],
  ])('refuses %s and keeps the channel', async (_name, fields, code) => {
    const created = await createChannel({ model_mapping: '{"keep":"me"}' });
    const answer = await root.put('/api/channel/', { id: created.id, ...fields });
    expect(answer.body).toMatchObject({ success: false, code });
    expect((await getChannel(created.id)).model_mapping).toBe('{"keep":"me"}');
  });

  it('reads an empty JSON value in a tag edit as "no change"', async () => {
    await createChannel({ tag: 'json-tag', model_mapping: '{"a":"b"}' });
    const answer = await root.put('/api/channel/tag', { tag: 'json-tag', model_mapping: '{}', param_override: 'null' });
    expect(answer.body).toMatchObject({ success: false, code: 'CHANNEL_TAG_NOTHING_CHANGED' });
    const mapped = await root.put('/api/channel/tag', { tag: 'json-tag', model_mapping: { c: 'd' } });
    expect(mapped.body).toMatchObject({ success: true, data: 1 });
  });
});

describe('GET /api/status (web/src/hooks/common/useHeaderBar.js, useSidebar.js JSON.parse these)', () => {
  it('answers the module settings as JSON text, "" while unset', async () => {
    await gateway.options.setMany({ HeaderNavModules: '{}', SidebarModulesAdmin: '{}' });
    const unset = (await client().get('/api/status')).body.data;
    expect(unset.HeaderNavModules).toBe('');
    expect(unset.SidebarModulesAdmin).toBe('');

    const header = { home: true, console: true, pricing: { enabled: true, requireAuth: false }, docs: false };
    const sidebar = { admin: { enabled: true, channel: false } };
    await gateway.options.setMany({
      HeaderNavModules: JSON.stringify(header),
      SidebarModulesAdmin: JSON.stringify(sidebar),
    });
    const set = (await client().get('/api/status')).body.data;
    expect(typeof set.HeaderNavModules).toBe('string');
    expect(JSON.parse(set.HeaderNavModules)).toEqual(header);
    expect(JSON.parse(set.SidebarModulesAdmin)).toEqual(sidebar);
  });

  it('answers the features Tollgate does not serve as off, and has no options for them', async () => {
    const answer = await root.put('/api/option/', { key: 'StripeApiSecret', value: 'sk_test' });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ success: false, code: 'OPTION_UNKNOWN' });
    const status = (await client().get('/api/status')).body.data;
    expect(status).toMatchObject({
      enable_stripe_topup: false,
    });
    expect(status).not.toHaveProperty('stripe_unit_price');
  });

  it('answers discord_oauth on only once Discord sign-in is switched on and has its credentials', async () => {
    const discordOn = async () => (await client().get('/api/status')).body.data.discord_oauth;
    expect(await discordOn()).toBe(false);
    expect((await root.put('/api/option/', { key: 'discord.enabled', value: 'true' })).body.success).toBe(true);
    expect(await discordOn()).toBe(false);
    await root.put('/api/option/', { key: 'discord.client_id', value: '123456' });
    await root.put('/api/option/', { key: 'discord.client_secret', value: 'discord-secret' });
    expect(await discordOn()).toBe(true);
    await root.put('/api/option/', { key: 'discord.enabled', value: 'false' });
    expect(await discordOn()).toBe(false);
  });
});

describe('GET /api/user/self (web/src/hooks/common/useUserPermissions.js reads permissions)', () => {
  it('answers the sidebar permissions of each role and no saved sidebar layout', async () => {
    const plain = await user('permplain');
    const adminClient = await admin('permadmin');
    const expected = [
      [plain, { admin: false }],
      [adminClient, { admin: { setting: false } }],
      [root, {}],
    ] as const;
    for (const [c, modules] of expected) {
      const self = (await c.get('/api/user/self')).body.data;
      expect(self.permissions).toEqual({ sidebar_settings: false, sidebar_modules: modules });
      expect(self.sidebar_modules).toBe('');
      expect(typeof self.setting).toBe('string');
      expect(JSON.parse(self.setting)).toMatchObject({ notify_type: 'email' });
    }
  });

  it('refuses a visitor with NOT_LOGGED_IN', async () => {
    expect((await client().get('/api/user/self')).body).toMatchObject({ success: false, code: 'NOT_LOGGED_IN' });
  });
});

describe('POST /api/channel/fix (web/default/src/features/channels/api.ts reads data.success, data.fails)', () => {
  it('answers how many channels were rebuilt and how many failed', async () => {
    await createChannel();
    const channels = Number(
      (
        await db()
          .selectFrom('channels')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
    expect((await root.post('/api/channel/fix')).body).toMatchObject({
      success: true,
      data: { success: channels, fails: 0 },
    });
  });

  it('refuses a user who is not an administrator', async () => {
    const c = await user('nofix');
    expect((await c.post('/api/channel/fix')).body).toMatchObject({ success: false, code: 'FORBIDDEN' });
  });
});

describe('GET /api/setup database_type (web/src/components/setup/components/steps/DatabaseStep.jsx)', () => {
  it.runIf(hasPostgres())('names PostgreSQL "postgres"', async () => {
    expect((await client().get('/api/setup')).body.data.database_type).toBe('postgres');
  });

  it('names the embedded database "sqlite", the value the front ends warn about', async () => {
    const embedded = hasPostgres()
      ? await startTestGateway(gatewayEnv({ dataDir: 'memory://' }, testNamespace()))
      : gateway;
    try {
      const answer = (await fetch(`${embedded.url}/api/setup`).then((r) => r.json())) as {
        data: { database_type: string };
      };
      expect(answer.data.database_type).toBe('sqlite');
    } finally {
      if (embedded !== gateway) await embedded.stop();
    }
  });
});

describe('methods of the current front ends (web/default/src/features/auth/api.ts)', () => {
  it.each([
    ['GET', '/api/user/logout'],
    ['POST', '/api/user/logout'],
    ['POST', '/api/user/auth/logout'],
  ])('%s %s ends the session', async (method, path) => {
    const c = await user(`out${++counter}`);
    expect((await c.get('/api/user/self')).body.success).toBe(true);
    const answer = await c.call(method, path, method === 'POST' ? {} : undefined);
    expect(answer.body).toMatchObject({ success: true });
    expect((await c.get('/api/user/self')).body).toMatchObject({ success: false, code: 'NOT_LOGGED_IN' });
  });

  it('issues an OAuth state for POST {provider, intent, aff} as for GET ?aff=', async () => {
    const posted = await client().call('POST', '/api/oauth/state', {
      provider: 'github',
      intent: 'login',
      aff: 'ab12',
    });
    expect(posted.body.success).toBe(true);
    expect(posted.body.data).toMatch(/^\S{12,}$/);
    expect(posted.headers.getSetCookie().join(';')).toContain(`oauth_state=${posted.body.data}`);
    const got = await client().get('/api/oauth/state?aff=ab12');
    expect(got.body.data).toMatch(/^\S{12,}$/);
    expect(got.body.data).not.toBe(posted.body.data);
  });

  it('refuses an OAuth state request with an invitation code that is too long', async () => {
    const answer = await client().call('POST', '/api/oauth/state', { provider: 'github', aff: 'x'.repeat(65) });
    expect(answer.body).toMatchObject({ success: false, code: 'INVALID_REQUEST' });
  });
});

describe('DELETE /api/user/self without a body (new-api’s clients send none)', () => {
  it('deregisters the signed-in user', async () => {
    const c = await user('bodyless');
    expect((await c.delete('/api/user/self')).body).toMatchObject({ success: true });
    expect((await c.get('/api/user/self')).body).toMatchObject({ success: false, code: 'NOT_LOGGED_IN' });
    expect((await client().login('bodyless', 'password-1')).body).toMatchObject({ success: false });
    expect((await userRow('bodyless'))?.deleted_at).not.toBeNull();
  });

  it('still refuses a confirmation that is not the username, and the root', async () => {
    const c = await user('confirmer');
    expect((await c.delete('/api/user/self', { username: 'someone' })).body).toMatchObject({
      success: false,
      code: 'DELETE_CONFIRMATION_MISMATCH',
    });
    expect((await root.delete('/api/user/self')).body).toMatchObject({ success: false, code: 'ROOT_PROTECTED' });
    expect((await userRow('confirmer'))?.deleted_at).toBeNull();
    expect((await root.get('/api/user/self')).body.success).toBe(true);
  });
});
