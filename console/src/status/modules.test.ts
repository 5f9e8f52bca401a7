import { describe, expect, it } from 'vitest';
import {
  DEFAULT_HEADER_NAV,
  headerNavValue,
  menuEntryShown,
  pageAccess,
  readHeaderNav,
  readSidebar,
  type SidebarEntry,
} from './modules.ts';

const status = (extra: Record<string, unknown>) => ({ HeaderNavModules: '', SidebarModulesAdmin: '', ...extra });
type Status = ReturnType<typeof status>;
/** The side menu's items with their settings entries, as menu.tsx declares them. */
const ITEMS: Array<{ to: string; entry: SidebarEntry }> = [
  { to: '/playground', entry: ['chat', 'playground'] },
  { to: '/detail', entry: ['console', 'detail'] },
  { to: '/token', entry: ['console', 'token'] },
  { to: '/log', entry: ['console', 'log'] },
  { to: '/channel', entry: ['admin', 'channel'] },
  { to: '/setting', entry: ['admin', 'setting'] },
  { to: '/topup', entry: ['personal', 'topup'] },
  { to: '/personal', entry: ['personal', 'personal'] },
];
const menuPaths = (s: Status, permissions: 'user' | 'admin' | 'root') =>
  ITEMS.filter((item) => menuEntryShown({ status: s, permissions }, item)).map((item) => item.to);

describe('top-bar settings (HeaderNavModules)', () => {
  it('shows everything while unset, and keeps the default of a key left out', () => {
    expect(readHeaderNav('')).toEqual(DEFAULT_HEADER_NAV);
    expect(readHeaderNav('not json')).toEqual(DEFAULT_HEADER_NAV);
    expect(readHeaderNav('{"about":false}')).toEqual({ ...DEFAULT_HEADER_NAV, about: false });
  });
  it("reads pricing in both of new-api's forms", () => {
    expect(readHeaderNav('{"pricing":false}').pricing).toEqual({ enabled: false, requireAuth: false });
    expect(readHeaderNav({ pricing: { enabled: true, requireAuth: true } }).pricing).toEqual({
      enabled: true,
      requireAuth: true,
    });
  });
  it('writes every entry back and keeps the fields it does not know', () => {
    const stored = JSON.stringify({ guide: false, pricing: { enabled: true, overviewMetricsAdminOnly: true } });
    const nav = { ...DEFAULT_HEADER_NAV, docs: false, pricing: { enabled: true, requireAuth: true } };
    expect(JSON.parse(headerNavValue(stored, nav))).toEqual({
      guide: false,
      home: true,
      console: true,
      docs: false,
      about: true,
      pricing: { enabled: true, requireAuth: true, overviewMetricsAdminOnly: true },
    });
  });
});

describe('side-menu settings (SidebarModulesAdmin)', () => {
  it('merges the saved sections over the defaults and keeps unknown ones', () => {
    const merged = readSidebar(JSON.stringify({ console: { token: false }, admin: { models: false } }));
    expect(merged.console).toMatchObject({ enabled: true, detail: true, token: false });
    expect(merged.admin).toMatchObject({ enabled: true, channel: true, models: false });
  });
  it('hides turned-off entries and sections from the menu', () => {
    expect(menuPaths(status({}), 'user')).toEqual(ITEMS.map((item) => item.to));
    const off = status({
      SidebarModulesAdmin: JSON.stringify({ console: { log: false }, personal: { enabled: false } }),
    });
    const shown = menuPaths(off, 'user');
    expect(shown).toContain('/token');
    expect(shown).not.toContain('/log');
    expect(shown).not.toContain('/topup');
    expect(shown).not.toContain('/personal');
  });
  it('never hides System settings from the super administrator', () => {
    const off = status({ SidebarModulesAdmin: JSON.stringify({ admin: { enabled: false } }) });
    expect(menuPaths(off, 'root')).toEqual(expect.arrayContaining(['/setting']));
    expect(menuPaths(off, 'root')).not.toContain('/channel');
    expect(menuPaths(off, 'admin')).not.toContain('/setting');
  });
});

describe('pages behind turned-off entries', () => {
  const user = { signedIn: true, admin: false };
  const admin = { signedIn: true, admin: true };
  const visitor = { signedIn: false, admin: false };
  const off = status({
    SidebarModulesAdmin: JSON.stringify({ console: { log: false }, chat: { enabled: false } }),
    HeaderNavModules: JSON.stringify({ pricing: { enabled: true, requireAuth: true } }),
  });
  it('are off for users and open for administrators', () => {
    expect(pageAccess(off, '/log', user)).toBe('off');
    expect(pageAccess(off, '/chat/0', user)).toBe('off');
    expect(pageAccess(off, '/playground', user)).toBe('off');
    expect(pageAccess(off, '/token', user)).toBe('open');
    expect(pageAccess(off, '/log', admin)).toBe('open');
  });
  it('send visitors to sign in when pricing asks for it, and close pricing when it is off', () => {
    expect(pageAccess(off, '/pricing', visitor)).toBe('sign-in');
    expect(pageAccess(off, '/pricing', user)).toBe('open');
    const closed = status({ HeaderNavModules: '{"pricing":false}' });
    expect(pageAccess(closed, '/pricing', visitor)).toBe('off');
    expect(pageAccess(closed, '/pricing', admin)).toBe('open');
    expect(pageAccess(status({}), '/pricing', visitor)).toBe('open');
  });
});
