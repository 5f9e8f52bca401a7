import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyPassword } from '../../gateway/src/domain/accounts/password.ts';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';

let gateway: Gateway;

/** Response bodies are whatever the server sent; the assertions check their shape. */
const read = (response: Response): Promise<any> => response.json();
let drop: () => Promise<void>;

beforeAll(async () => {
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(gatewayEnv(database.options, testNamespace()));
});
afterAll(async () => {
  await gateway?.stop();
  await drop?.();
});

const post = (body: string, headers: Record<string, string> = {}) =>
  fetch(`${gateway.url}/api/setup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'accept-language': 'en', ...headers },
    body,
  });

async function nothingWritten() {
  const db = gateway.store.db;
  const count = async (table: 'users' | 'setups') =>
    (await db.selectFrom(table).select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow()).n;
  expect(await count('users')).toBe(0);
  expect(await count('setups')).toBe(0);
  const modes = await db
    .selectFrom('options')
    .select('key')
    .where('key', 'in', ['SelfUseModeEnabled', 'DemoSiteEnabled'])
    .execute();
  expect(modes).toEqual([]);
}

const valid = { username: 'admin', password: 'secret-pass', confirmPassword: 'secret-pass' };

describe('before setup', () => {
  it('reports setup not done in the status object and the setup status', async () => {
    const status = await await read(await fetch(`${gateway.url}/api/status`));
    expect(status.success).toBe(true);
    expect(status.data.setup).toBe(false);
    expect(status.data.quota_per_unit).toBe(500000);
    expect(status.data.usd_exchange_rate).toBe(7.3);
    expect(status.data.version).toBe('test');
    const setup = await await read(await fetch(`${gateway.url}/api/setup`));
    expect(setup).toEqual({
      success: true,
      message: '',
      data: { status: false, root_init: false, database_type: gateway.store.kind },
    });
  });

  it('carries every field of the public status object and no secret', async () => {
    // spec doc 1 §3 "Public status object" and the fields the status call also carries.
    const fields = [
      'system_name',
      'logo',
      'footer_html',
      'quota_per_unit',
      'display_in_currency',
      'enable_drawing',
      'enable_task',
      'enable_data_export',
      'chats',
      'pay_methods',
      'data_export_default_time',
      'default_collapse_sidebar',
      'mj_notify_enabled',
      'chat_link',
      'chat_link2',
      'docs_link',
      'version',
      'start_time',
      'turnstile_check',
      'turnstile_site_key',
      'email_verification',
      'github_oauth',
      'github_client_id',
      'oidc_enabled',
      'oidc_client_id',
      'oidc_authorization_endpoint',
      'wechat_login',
      'wechat_qrcode',
      'telegram_oauth',
      'telegram_bot_name',
      'linuxdo_oauth',
      'linuxdo_client_id',
      'server_address',
      'price',
      'usd_exchange_rate',
      'enable_online_topup',
      'self_use_mode_enabled',
      'demo_site_enabled',
      'setup',
      'default_use_auto_group',
    ];
    await gateway.options.setMany({
      GitHubClientId: 'public-client-id',
      GitHubClientSecret: 'very-secret-value',
      GitHubOAuthEnabled: 'true',
    });
    const status = (await read(await fetch(`${gateway.url}/api/status`))).data;
    expect(Object.keys(status)).toEqual(expect.arrayContaining(fields));
    expect(status).toMatchObject({
      github_oauth: true,
      github_client_id: 'public-client-id',
      display_in_currency: true,
    });
    expect(Math.abs(status.start_time - Date.now() / 1000)).toBeLessThan(120);
    expect(JSON.stringify(status)).not.toContain('very-secret-value');
    await gateway.options.setMany({ GitHubClientId: '', GitHubClientSecret: '', GitHubOAuthEnabled: 'false' });
  });

  it.each([
    ['malformed JSON', '{"username": "admin",', 200, 'INVALID_JSON'],
    ['an empty body', '', 200, 'EMPTY_BODY'],
    ['a JSON array', '[]', 200, 'INVALID_REQUEST'],
    ['a number for the username', JSON.stringify({ ...valid, username: 12345 }), 200, 'INVALID_REQUEST'],
    ['a string for a usage-mode flag', JSON.stringify({ ...valid, SelfUseModeEnabled: 'yes' }), 200, 'INVALID_REQUEST'],
    ['missing fields', '{}', 200, 'SETUP_USERNAME_REQUIRED'],
    ['a blank username', JSON.stringify({ ...valid, username: '   ' }), 200, 'SETUP_USERNAME_REQUIRED'],
    [
      'a 13-character username',
      JSON.stringify({ ...valid, username: 'abcdefghijklm' }),
      200,
      'SETUP_USERNAME_TOO_LONG',
    ],
    [
      'a 7-character password',
      JSON.stringify({ ...valid, password: '1234567', confirmPassword: '1234567' }),
      200,
      'SETUP_PASSWORD_TOO_SHORT',
    ],
    ['a missing password', JSON.stringify({ username: 'admin' }), 200, 'SETUP_PASSWORD_TOO_SHORT'],
    [
      'a password bcrypt would truncate',
      JSON.stringify({ ...valid, password: 'x'.repeat(73), confirmPassword: 'x'.repeat(73) }),
      200,
      'SETUP_PASSWORD_TOO_LONG',
    ],
    [
      'a different confirmation',
      JSON.stringify({ ...valid, confirmPassword: 'secret-pasS' }),
      200,
      'SETUP_PASSWORD_MISMATCH',
    ],
    [
      'two usage modes at once',
      JSON.stringify({ ...valid, SelfUseModeEnabled: true, DemoSiteEnabled: true }),
      200,
      'SETUP_USAGE_MODE_CONFLICT',
    ],
  ])('refuses %s with a clear 4xx and writes nothing', async (_name, body, status, code) => {
    const response = await post(body);
    expect(response.status).toBe(status);
    const answer = await read(response);
    expect(answer.success).toBe(false);
    expect(answer.code).toBe(code);
    expect(answer.message.length).toBeGreaterThan(5);
    await nothingWritten();
  });

  it('refuses a 10 MB body (BODY_TOO_LARGE) and writes nothing', async () => {
    const response = await post(JSON.stringify({ ...valid, username: 'a'.repeat(10 * 1024 * 1024) }));
    expect(response.status).toBe(200);
    expect((await read(response)).code).toBe('BODY_TOO_LARGE');
    await nothingWritten();
  });

  it('refuses a non-JSON content type (UNSUPPORTED_MEDIA_TYPE)', async () => {
    const response = await post('username=admin', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(response.status).toBe(200);
    expect((await read(response)).code).toBe('UNSUPPORTED_MEDIA_TYPE');
    await nothingWritten();
  });

  it('answers validation messages in Chinese by default and in English on request', async () => {
    const body = JSON.stringify({ ...valid, confirmPassword: 'other-pass' });
    expect((await read(await post(body, { 'accept-language': '' }))).message).toBe('两次输入的密码不一致');
    expect((await read(await post(body, { 'accept-language': 'zh-CN,zh;q=0.9' }))).message).toBe(
      '两次输入的密码不一致',
    );
    expect((await read(await post(body))).message).toBe('The two passwords entered do not match');
  });
});

describe('setup', () => {
  it('creates exactly one root administrator even when requests race', async () => {
    const answers = await Promise.all(
      [1, 2, 3, 4, 5].map(() => post(JSON.stringify({ ...valid, SelfUseModeEnabled: true }))),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    const outcomes = (await Promise.all(answers.map(read))).map((a) => a.code ?? 'created').sort();
    expect(outcomes).toEqual([
      'SETUP_ALREADY_DONE',
      'SETUP_ALREADY_DONE',
      'SETUP_ALREADY_DONE',
      'SETUP_ALREADY_DONE',
      'created',
    ]);

    const users = await gateway.store.db.selectFrom('users').selectAll().execute();
    expect(users).toHaveLength(1);
    const root = users[0]!;
    expect(root).toMatchObject({ username: 'admin', role: 100, status: 1, quota: 100_000_000, group: 'default' });
    expect(root.password).not.toContain('secret-pass');
    expect(await verifyPassword('secret-pass', root.password)).toBe(true);
  });

  it('records the usage mode and reports setup done', async () => {
    const status = (await await read(await fetch(`${gateway.url}/api/status`))).data;
    expect(status.setup).toBe(true);
    expect(status.self_use_mode_enabled).toBe(true);
    expect(status.demo_site_enabled).toBe(false);
    const setup = (await await read(await fetch(`${gateway.url}/api/setup`))).data;
    expect(setup).toMatchObject({ status: true, root_init: true });
  });

  it('refuses a second setup and leaves the root untouched', async () => {
    const before = await gateway.store.db.selectFrom('users').selectAll().execute();
    const response = await post(
      JSON.stringify({ username: 'other', password: 'another-pass', confirmPassword: 'another-pass' }),
    );
    expect(response.status).toBe(200);
    expect(await read(response)).toMatchObject({ success: false, code: 'SETUP_ALREADY_DONE' });
    expect(await gateway.store.db.selectFrom('users').selectAll().execute()).toEqual(before);
  });
});

describe('unknown paths', () => {
  it('answers /api/* in the envelope and /v1/* in OpenAI error shape', async () => {
    const api = await fetch(`${gateway.url}/api/nope?x=1`, { headers: { 'accept-language': 'en' } });
    expect(api.status).toBe(404);
    expect(await read(api)).toEqual({ success: false, message: 'No such endpoint: GET /api/nope', code: 'NOT_FOUND' });

    const relay = await fetch(`${gateway.url}/v1/nope`, { method: 'POST' });
    expect(relay.status).toBe(404);
    expect(await read(relay)).toEqual({
      error: { message: 'Invalid URL (POST /v1/nope)', type: 'invalid_request_error', param: null, code: null },
    });
  });
});
