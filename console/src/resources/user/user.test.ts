import { describe, expect, it } from 'vitest';
import { addQuota, rowActions, validateEditUser, validateNewUser } from './form.ts';

describe('user row actions (spec doc 1 §4, §6)', () => {
  const actions = (user: { role: number; status: number; DeletedAt?: string | null }, viewer = 100) =>
    rowActions({ DeletedAt: null, ...user }, viewer).map((a) => (a.disabled ? `${a.action}(off)` : a.action));
  it('offers promote to root only, demote to administrators, disable only when active', () => {
    expect(actions({ role: 1, status: 1 })).toEqual(['promote', 'disable', 'edit', 'delete']);
    expect(actions({ role: 1, status: 1 }, 10)).toEqual(['disable', 'edit', 'delete']);
    expect(actions({ role: 10, status: 2 })).toEqual(['demote', 'enable', 'edit', 'delete']);
    expect(actions({ role: 1, status: 3 })).toEqual(['promote', 'enable(off)', 'edit', 'delete']);
    expect(actions({ role: 1, status: 1, DeletedAt: '2024-01-01' })).toEqual([]);
    // The same level or above: shown but off, except editing oneself.
    expect(actions({ role: 10, status: 1 }, 10)).toEqual(['demote(off)', 'disable(off)', 'edit(off)', 'delete(off)']);
    expect(rowActions({ role: 100, status: 1, DeletedAt: null }, 100, true).map((a) => a.disabled ?? false)).toEqual([
      true,
      false,
      true,
    ]);
  });
});

describe('user forms (spec doc 1 §5)', () => {
  it('checks add and edit', () => {
    expect(validateNewUser({ username: '', password: 'x' })).toBe('user_admin.validation.username_password_required');
    expect(validateNewUser({ username: 'a', password: 'x' })).toBeUndefined();
    const edit = { username: 'a', display_name: '', password: '', group: 'default', quota: '5', remark: '' };
    expect(validateEditUser(edit)).toBeUndefined();
    expect(validateEditUser({ ...edit, password: 'short' })).toBe('user_admin.validation.password_short');
    expect(validateEditUser({ ...edit, quota: '1.5' })).toBe('user_admin.validation.quota_integer');
  });
  it('adds negative quota too', () => {
    expect(addQuota('100', '-30')).toBe('70');
    expect(addQuota('100', 'x')).toBeUndefined();
  });
});
