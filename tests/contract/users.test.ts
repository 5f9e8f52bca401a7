import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ContractGateway,
  expectOk,
  expectPage,
  expectRefusal,
  expectShape,
  type FrontEnd,
  type Shape,
  startContractGateway,
} from './support.ts';

/** User management: table, add and edit drawers, row actions, quota adjustment (CATALOGUE.md "User management"). */

let g: ContractGateway;
let root: FrontEnd;

beforeAll(async () => {
  g = await startContractGateway('10.43.0');
  root = g.root;
});

afterAll(async () => {
  await g?.stop();
});

/** UsersColumnDefs.jsx and useUsersData.jsx `handleRow` (`record.DeletedAt !== null` shades the row). */
const USER_ROW: Shape = {
  id: 'integer',
  username: 'string',
  display_name: 'string',
  role: 'integer',
  status: 'integer',
  group: 'string',
  quota: 'integer',
  used_quota: 'integer',
  request_count: 'integer',
  remark: 'string',
  DeletedAt: ['null', 'string'],
};

/** The edit drawer's form values on submit (EditUserModal.jsx; quota fields removed). */
const editForm = (user: any, extra: Record<string, unknown> = {}) => ({
  username: user.username,
  display_name: user.display_name,
  password: '',
  github_id: user.github_id,
  oidc_id: user.oidc_id,
  discord_id: '',
  wechat_id: user.wechat_id,
  telegram_id: user.telegram_id,
  linux_do_id: user.linux_do_id,
  email: user.email,
  group: user.group,
  remark: user.remark ?? '',
  id: user.id,
  ...extra,
});

const idOf = async (username: string): Promise<number> => {
  const data = expectOk(await root.get(`/api/user/search?keyword=${username}&group=&p=1&page_size=10`));
  const found = (data.items as any[]).find((u) => u.username === username);
  expect(found, `${username} found`).toBeDefined();
  return found.id;
};

const manage = (id: number, action: string, extra: Record<string, unknown> = {}) =>
  root.post('/api/user/manage', { id, action, ...extra });

describe('the table (useUsersData.jsx)', () => {
  it('answers the first load (p=0) and later pages with live rows whose DeletedAt is null', async () => {
    await g.user('tbl1');
    for (const p of [0, 1]) {
      const data = expectOk(await root.get(`/api/user/?p=${p}&page_size=10`));
      const items = expectPage(data, USER_ROW, `p=${p}`);
      expect(items.length).toBeGreaterThanOrEqual(2);
      for (const u of items) expect(u.DeletedAt, u.username).toBeNull();
    }
  });

  it('searches by keyword and by group', async () => {
    await g.user('srch1');
    const byName = expectPage(
      expectOk(await root.get('/api/user/search?keyword=srch1&group=&p=1&page_size=10')),
      USER_ROW,
    );
    expect(byName.map((u) => u.username)).toEqual(['srch1']);
    const byGroup = expectPage(
      expectOk(await root.get('/api/user/search?keyword=&group=default&p=1&page_size=10')),
      USER_ROW,
    );
    expect(byGroup.length).toBeGreaterThan(0);
    for (const u of byGroup) expect(u.group).toBe('default');
  });

  it('answers the group names for the filter and the drawer', async () => {
    const groups = expectOk(await root.get('/api/group/'));
    expect(Array.isArray(groups)).toBe(true);
    expect(groups).toContain('default');
  });

  it('refuses a normal user as a business refusal, not as signed out', async () => {
    const c = await g.user('tbl2');
    expectRefusal(await c.get('/api/user/?p=1&page_size=10'));
    expectRefusal(await c.post('/api/user/manage', { id: c.userId, action: 'promote' }));
    expectOk(await c.get('/api/user/self'));
  });
});

describe('adding and editing (AddUserModal.jsx, EditUserModal.jsx)', () => {
  it('creates a user from the add drawer and refuses a duplicate and an empty password', async () => {
    expectOk(
      await root.post('/api/user/', {
        username: 'added1',
        display_name: 'Added One',
        password: 'password-1',
        remark: 'from the drawer',
      }),
    );
    const user = expectOk(await root.get(`/api/user/${await idOf('added1')}`));
    expect(user).toMatchObject({ username: 'added1', display_name: 'Added One', role: 1, status: 1 });
    expectRefusal(
      await root.post('/api/user/', { username: 'added1', display_name: '', password: 'password-1', remark: '' }),
    );
    expectRefusal(await root.post('/api/user/', { username: 'added2', display_name: '', password: '', remark: '' }));
  });

  it('GET /api/user/{id} answers the drawer fields with a numeric quota', async () => {
    const id = await idOf('added1');
    expectShape(
      expectOk(await root.get(`/api/user/${id}`)),
      { ...USER_ROW, email: 'string', github_id: 'string' },
      'user',
    );
  });

  it('PUT /api/user/ with the drawer form saves the edits and keeps the password when it is empty', async () => {
    await g.user('edit1');
    const id = await idOf('edit1');
    const user = expectOk(await root.get(`/api/user/${id}`));
    expectOk(await root.put('/api/user/', editForm(user, { display_name: 'Edited', remark: 'note' })));
    expect(expectOk(await root.get(`/api/user/${id}`))).toMatchObject({ display_name: 'Edited', remark: 'note' });
    expectOk(await g.visitor().post('/api/user/login', { username: 'edit1', password: 'password-1' }));
  });

  it('refuses a password shorter than 8 in the drawer as a business refusal', async () => {
    await g.user('edit2');
    const user = expectOk(await root.get(`/api/user/${await idOf('edit2')}`));
    expectRefusal(await root.put('/api/user/', editForm(user, { password: 'short' })));
  });
});

describe('row actions (useUsersData.jsx manageUser)', () => {
  it('answers data.status and data.role for promote, demote, disable and enable', async () => {
    await g.user('row1');
    const id = await idOf('row1');
    const expectations: Array<[string, { status: number; role: number }]> = [
      ['promote', { status: 1, role: 10 }],
      ['demote', { status: 1, role: 1 }],
      ['disable', { status: 2, role: 1 }],
      ['enable', { status: 1, role: 1 }],
    ];
    for (const [action, expected] of expectations) {
      const data = expectOk(await manage(id, action));
      expectShape(data, { status: 'integer', role: 'integer' }, action);
      expect(data, action).toMatchObject(expected);
    }
  });

  it('deletes a user; the table then shows the row as deregistered (DeletedAt set)', async () => {
    await g.user('row2');
    const id = await idOf('row2');
    expectOk(await manage(id, 'delete'));
    const items = expectOk(await root.get('/api/user/?p=1&page_size=100')).items as any[];
    const row = items.find((u) => u.id === id);
    expect(row, 'deleted user still listed').toBeDefined();
    expect(row.DeletedAt).not.toBeNull();
  });

  it('refuses acting on root, and an unknown action, as business refusals', async () => {
    await g.user('row3');
    const id = await idOf('row3');
    expectOk(await manage(id, 'promote'));
    const admin = g.visitor();
    expectOk(await admin.login('row3', 'password-1'));
    expectRefusal(await admin.post('/api/user/manage', { id: root.userId, action: 'disable' }));
    expectRefusal(await admin.post('/api/user/manage', { id: await idOf('tbl1'), action: 'promote' }));
    expectRefusal(await manage(id, 'explode'));
  });
});

describe('quota adjustment (EditUserModal.jsx adjustQuota)', () => {
  it('adds, subtracts and overrides with {action: add_quota, mode, value}', async () => {
    await g.user('quota1');
    const id = await idOf('quota1');
    const quota = async () => expectOk(await root.get(`/api/user/${id}`)).quota as number;
    const start = await quota();
    expectOk(await manage(id, 'add_quota', { mode: 'add', value: 1000 }));
    expect(await quota()).toBe(start + 1000);
    expectOk(await manage(id, 'add_quota', { mode: 'subtract', value: 400 }));
    expect(await quota()).toBe(start + 600);
    expectOk(await manage(id, 'add_quota', { mode: 'override', value: 42 }));
    expect(await quota()).toBe(42);
  });

  it('refuses an unknown mode and a non-numeric value as business refusals', async () => {
    await g.user('quota2');
    const id = await idOf('quota2');
    expectRefusal(await manage(id, 'add_quota', { mode: 'multiply', value: 2 }));
    expectRefusal(await manage(id, 'add_quota', { mode: 'add', value: 'lots' }));
  });
});
