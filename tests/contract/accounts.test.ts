import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ContractGateway,
  expectOk,
  expectRefusal,
  expectShape,
  expectSignedOut,
  FrontEnd,
  type Shape,
  startContractGateway,
} from './support.ts';

/**
 * Shell, setup, sign-in and personal settings as new-api's front end calls them
 * (tests/contract/CATALOGUE.md, sections "Shell, status, setup", "Accounts and sign-in", "Personal settings").
 */

let g: ContractGateway;

beforeAll(async () => {
  g = await startContractGateway('10.40.0');
});

afterAll(async () => {
  await g?.stop();
});

/** helpers/data.js setStatusData, LoginForm.jsx, useSidebar.js, topup/index.jsx. */
const STATUS: Shape = {
  system_name: 'string',
  logo: 'string',
  footer_html: 'string',
  quota_per_unit: 'number',
  display_in_currency: 'boolean',
  enable_drawing: 'boolean',
  enable_task: 'boolean',
  enable_data_export: 'boolean',
  chats: 'array',
  data_export_default_time: 'string',
  default_collapse_sidebar: 'boolean',
  mj_notify_enabled: 'boolean',
  chat_link: 'string',
  docs_link: 'string',
  server_address: 'string',
  price: 'number',
  usd_exchange_rate: 'number',
  enable_online_topup: 'boolean',
  self_use_mode_enabled: 'boolean',
  demo_site_enabled: 'boolean',
  setup: 'boolean',
  turnstile_check: 'boolean',
  turnstile_site_key: 'string',
  email_verification: 'boolean',
  github_oauth: 'boolean',
  github_client_id: 'string',
  oidc_enabled: 'boolean',
  oidc_client_id: 'string',
  oidc_authorization_endpoint: 'string',
  wechat_login: 'boolean',
  wechat_qrcode: 'string',
  telegram_oauth: 'boolean',
  telegram_bot_name: 'string',
  linuxdo_oauth: 'boolean',
  linuxdo_client_id: 'string',
  default_use_auto_group: 'boolean',
  version: 'string',
  start_time: 'integer',
};

/** The session user LoginForm.jsx stores (its id becomes New-Api-User). */
const SESSION_USER: Shape = {
  id: 'integer',
  username: 'string',
  display_name: 'string',
  role: 'integer',
  status: 'integer',
  group: 'string',
};

/** GET /api/user/self as PersonalSetting.jsx, topup/index.jsx and useUserPermissions.js read it. */
const SELF: Shape = {
  ...SESSION_USER,
  quota: 'integer',
  used_quota: 'integer',
  request_count: 'integer',
  aff_code: 'string',
  aff_count: 'integer',
  aff_quota: 'integer',
  aff_history_quota: 'integer',
  email: 'string',
  github_id: 'string',
  oidc_id: 'string',
  wechat_id: 'string',
  telegram_id: 'string',
  linux_do_id: 'string',
  setting: 'json-text',
  permissions: 'object',
};

describe('GET /api/status (app load)', () => {
  it('answers the status object with the types the front end stores', async () => {
    const status = expectOk(await g.visitor().get('/api/status'));
    expectShape(status, STATUS, 'status');
    expect(status.setup).toBe(true);
    expect(status.quota_per_unit).toBeGreaterThan(0);
  });

  it('answers JSON-valued admin options as JSON text, as the sidebar and header JSON.parse them', async () => {
    const sidebar = { console: { enabled: true, detail: false } };
    const header = { home: true, pricing: false };
    expectOk(await g.root.put('/api/option/', { key: 'SidebarModulesAdmin', value: JSON.stringify(sidebar) }));
    expectOk(await g.root.put('/api/option/', { key: 'HeaderNavModules', value: JSON.stringify(header) }));
    const status = expectOk(await g.visitor().get('/api/status'));
    expectShape(status, { SidebarModulesAdmin: 'json-object-text', HeaderNavModules: 'json-object-text' }, 'status');
    expect(JSON.parse(status.SidebarModulesAdmin)).toEqual(sidebar);
    expect(JSON.parse(status.HeaderNavModules)).toEqual(header);
  });

  it('keeps the flags of features Tollgate lacks false, and has no options that could switch them on', async () => {
    // The front end offers Stripe top-up on this flag.
    for (const key of ['StripeApiSecret']) {
      const answer = await g.root.put('/api/option/', { key, value: 'sk_test' });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body.success, key).toBe(false);
    }
    const status = expectOk(await g.visitor().get('/api/status'));
    for (const flag of ['enable_stripe_topup']) {
      expect(status[flag] ?? false, `status.${flag}`).toBe(false);
    }
  });
});

describe('first-run setup (SetupWizard.jsx)', () => {
  it('GET /api/setup answers status, root_init and a database type the wizard knows', async () => {
    const setup = expectOk(await g.visitor().get('/api/setup'));
    expectShape(setup, { status: 'boolean', root_init: 'boolean', database_type: 'string' }, 'setup');
    expect(setup).toMatchObject({ status: true, root_init: true });
    expect(['sqlite', 'mysql', 'postgres']).toContain(setup.database_type);
  });

  it('refuses a second setup with the wizard body as a business refusal', async () => {
    expectRefusal(
      await g.visitor().post('/api/setup', {
        username: 'again',
        password: 'password-2',
        confirmPassword: 'password-2',
        SelfUseModeEnabled: false,
        DemoSiteEnabled: true,
      }),
    );
  });
});

describe('sign-in and registration (LoginForm.jsx, RegisterForm.jsx)', () => {
  beforeAll(async () => {
    expectOk(await g.visitor().post('/api/user/register', { username: 'sign1', password: 'password-1' }));
  });

  it('registers with the form body, aff_code null when no invite code is stored', async () => {
    const answer = await g.visitor().post('/api/user/register?turnstile=', {
      username: 'reg1',
      password: 'password-1',
      password2: 'password-1',
      email: '',
      verification_code: '',
      wechat_verification_code: '',
      aff_code: null,
    });
    expectOk(answer);
  });

  it('refuses a taken username and a short password as business refusals', async () => {
    const form = { password2: 'password-1', email: '', verification_code: '', aff_code: null };
    expectRefusal(
      await g.visitor().post('/api/user/register?turnstile=', { ...form, username: 'sign1', password: 'password-1' }),
    );
    expectRefusal(
      await g.visitor().post('/api/user/register?turnstile=', { ...form, username: 'reg2', password: 'short' }),
    );
  });

  it('signs in and answers the session user the front end stores', async () => {
    const c = g.visitor();
    const data = expectOk(await c.post('/api/user/login?turnstile=', { username: 'sign1', password: 'password-1' }));
    expectShape(data, SESSION_USER, 'login data');
    expect(data.require_2fa ?? false).toBe(false);
    expect(data.username).toBe('sign1');
    c.userId = data.id;
    expect(expectOk(await c.get('/api/user/self')).id).toBe(data.id);
  });

  it('refuses a wrong password and empty fields with HTTP 200', async () => {
    expectRefusal(
      await g.visitor().post('/api/user/login?turnstile=', { username: 'sign1', password: 'wrong-password' }),
    );
    expectRefusal(await g.visitor().post('/api/user/login?turnstile=', { username: '', password: '' }));
  });

  it('answers 429 when one address passes the sign-in rate limit', async () => {
    const c = g.visitor();
    const statuses: number[] = [];
    for (let i = 0; i < 30 && !statuses.includes(429); i++) {
      statuses.push(
        (await c.post('/api/user/login?turnstile=', { username: 'sign1', password: 'wrong-password' })).status,
      );
    }
    expect(statuses).toContain(429);
  });

  it('signs out through GET and POST /api/user/logout, after which the session is 401', async () => {
    for (const method of ['GET', 'POST'] as const) {
      const c = g.visitor();
      expectOk(await c.login('sign1', 'password-1'));
      expectOk(await c.call(method, '/api/user/logout', method === 'POST' ? {} : undefined));
      expectSignedOut(await c.get('/api/user/self'));
    }
  });
});

describe('who may call (the 401 the front end turns into /login?expired=true)', () => {
  it('answers 401 without a session, without New-Api-User, and with another user id in it', async () => {
    expectSignedOut(await g.visitor().get('/api/user/self'));
    const c = await g.user('who1');
    const withoutHeader = new FrontEnd(g.url, '10.40.9.2');
    withoutHeader.cookie = c.cookie;
    expectSignedOut(await withoutHeader.get('/api/user/self'));
    expectSignedOut(await c.get('/api/user/self', { 'new-api-user': String((c.userId ?? 0) + 1000) }));
    expectOk(await c.get('/api/user/self'));
  });

  it('accepts the generated access token with New-Api-User and answers 401 for an invalid one', async () => {
    const c = await g.user('who2');
    const token = expectOk(await c.get('/api/user/token'));
    expect(typeof token).toBe('string');
    expect(token.length).toBeGreaterThan(0);
    const bare = new FrontEnd(g.url, '10.40.9.1');
    const header = { 'new-api-user': String(c.userId) };
    expect(expectOk(await bare.get('/api/user/self', { ...header, authorization: token })).username).toBe('who2');
    expectSignedOut(await bare.get('/api/user/self', { ...header, authorization: `${token}x` }));
  });

  it('refuses a normal user on an admin route without signing them out', async () => {
    const c = await g.user('who3');
    expectRefusal(await c.get('/api/user/?p=1&page_size=10'));
    expectOk(await c.get('/api/user/self'));
  });
});

describe('personal settings (PersonalSetting.jsx, topup/index.jsx)', () => {
  it('GET /api/user/self answers the fields the page reads, setting as JSON text and permissions', async () => {
    const c = await g.user('me1');
    const self = expectOk(await c.get('/api/user/self'));
    expectShape(self, SELF, 'self');
    expectShape(self.permissions, { sidebar_settings: 'boolean' }, 'self.permissions');
    if (self.setting !== '') expect(JSON.parse(self.setting)).toBeTypeOf('object');
    expect(JSON.parse(self.setting || '{}')).not.toBeNull();
  });

  it('saves the notification form as the page sends it (extra fields included) and answers it back as JSON text', async () => {
    const c = await g.user('me2');
    const body = {
      notify_type: 'webhook',
      quota_warning_threshold: 500000,
      webhook_url: 'https://hooks.example.com/notify',
      webhook_secret: 'secret-1',
      webhook_payload_template: '{"type":"{{type}}"}',
      notification_email: '',
      bark_url: '',
      gotify_url: '',
      gotify_token: '',
      gotify_priority: 5,
      accept_unset_model_ratio_model: true,
      record_ip_log: false,
    };
    expectOk(await c.put('/api/user/setting', body));
    const self = expectOk(await c.get('/api/user/self'));
    expectShape(self, { setting: 'json-object-text' }, 'self');
    const setting = JSON.parse(self.setting);
    expect(setting).toMatchObject({
      notify_type: 'webhook',
      quota_warning_threshold: 500000,
      webhook_url: 'https://hooks.example.com/notify',
      accept_unset_model_ratio_model: true,
    });
  });

  it('refuses a plain-http webhook as a business refusal', async () => {
    const c = await g.user('me3');
    expectRefusal(
      await c.put('/api/user/setting', {
        notify_type: 'webhook',
        quota_warning_threshold: 100000,
        webhook_url: 'http://hooks.example.com/notify',
        webhook_secret: '',
        notification_email: '',
        accept_unset_model_ratio_model: false,
      }),
    );
  });

  it('changes the password with {original_password, password} and refuses a wrong original', async () => {
    const c = await g.user('me4');
    expectRefusal(await c.put('/api/user/self', { original_password: 'not-it-at-all', password: 'password-2' }));
    expectOk(await c.put('/api/user/self', { original_password: 'password-1', password: 'password-2' }));
    expectOk(await g.visitor().post('/api/user/login', { username: 'me4', password: 'password-2' }));
  });

  it('answers the invite code, the models and the groups the wallet and token pages read', async () => {
    const c = await g.user('me5');
    const aff = expectOk(await c.get('/api/user/aff'));
    expect(typeof aff).toBe('string');
    expect(aff.length).toBeGreaterThan(0);
    const models = expectOk(await c.get('/api/user/models'));
    expect(Array.isArray(models)).toBe(true);
    for (const m of models) expect(typeof m).toBe('string');
    const groups = expectOk(await c.get('/api/user/self/groups'));
    expect(groups).toBeTypeOf('object');
    expect(Array.isArray(groups)).toBe(false);
    expect(Object.keys(groups)).toContain('default');
    for (const [name, info] of Object.entries(groups)) expectShape(info, { desc: 'string', ratio: 'number' }, name);
  });

  it('transfers affiliate earnings into the balance (POST /api/user/aff_transfer {quota})', async () => {
    expectOk(await g.root.put('/api/option/', { key: 'QuotaForInviter', value: '1000000' }));
    const inviter = await g.user('inviter');
    const code = expectOk(await inviter.get('/api/user/aff'));
    const form = {
      username: 'invitee',
      password: 'password-1',
      password2: 'password-1',
      email: '',
      verification_code: '',
    };
    expectOk(await g.visitor().post('/api/user/register?turnstile=', { ...form, aff_code: code }));
    const before = expectOk(await inviter.get('/api/user/self'));
    expect(before).toMatchObject({ aff_count: 1, aff_quota: 1000000 });
    expectOk(await inviter.post('/api/user/aff_transfer', { quota: 500000 }));
    const after = expectOk(await inviter.get('/api/user/self'));
    expect(after).toMatchObject({ aff_quota: 500000, quota: before.quota + 500000 });
  });

  it('refuses an affiliate transfer beyond the earnings as a business refusal', async () => {
    const c = await g.user('me6');
    expectRefusal(await c.post('/api/user/aff_transfer', { quota: 500000 }));
  });

  it('deletes the own account with DELETE and no body; the session then ends', async () => {
    const c = await g.user('me7');
    expectOk(await c.delete('/api/user/self'));
    expectSignedOut(await c.get('/api/user/self'));
    expectRefusal(await g.visitor().post('/api/user/login', { username: 'me7', password: 'password-1' }));
  });

  it("refuses root's own deletion as a business refusal", async () => {
    expectRefusal(await g.root.delete('/api/user/self'));
    expectOk(await g.root.get('/api/user/self'));
  });
});

describe('OAuth, e-mail and password reset calls', () => {
  it('answers a state string for GET and POST /api/oauth/state, also with an invite code', async () => {
    for (const [method, path] of [
      ['GET', '/api/oauth/state'],
      ['GET', '/api/oauth/state?aff=abcd'],
      ['POST', '/api/oauth/state'],
    ] as const) {
      const state = expectOk(await g.visitor().call(method, path, method === 'POST' ? {} : undefined));
      expect(typeof state, `${method} ${path}`).toBe('string');
      expect(state.length).toBeGreaterThan(0);
    }
  });

  it('refuses callbacks of providers that are not configured as business refusals', async () => {
    for (const provider of ['github', 'oidc', 'linuxdo']) {
      expectRefusal(await g.visitor().get(`/api/oauth/${provider}?code=abc&state=def`));
    }
    expectRefusal(await g.visitor().get('/api/oauth/wechat?code=123456'));
    const c = await g.user('oa1');
    expectRefusal(await c.get('/api/oauth/wechat/bind?code=123456'));
  });

  it('refuses e-mail binding with a wrong code and a bad verification address', async () => {
    const c = await g.user('oa2');
    expectRefusal(await c.get('/api/oauth/email/bind?email=oa2@example.com&code=000000'));
    expectRefusal(await g.visitor().get('/api/verification?email=not-an-email&turnstile='));
  });

  it('refuses a reset request without mail set up and a reset with a bad token', async () => {
    expectRefusal(await g.visitor().get('/api/reset_password?email=nobody@example.com&turnstile='));
    expectRefusal(await g.visitor().post('/api/user/reset', { email: 'nobody@example.com', token: 'bad-token' }));
  });
});
