import { useSyncExternalStore } from 'react';

/**
 * The signed-in user as the console keeps it locally (spec doc 1 §3 "Session user"): stored under
 * `user` at sign-in, read by every call for the New-Api-User header, cleared at sign-out or on a 401.
 */
export interface SessionUser {
  id: number;
  username: string;
  display_name?: string;
  role: number;
  status?: number;
  group: string;
}

/** Roles (spec doc 1 §4): 1 user, 10 administrator, 100 super administrator. */
export const ROLE = { user: 1, admin: 10, root: 100 } as const;

/** react-admin permissions: what `usePermissions()` answers. Undefined for a visitor. */
export type Permissions = 'user' | 'admin' | 'root';

const USER_KEY = 'user';
/** Set when the server said the session is gone (a 401), until the next sign-in. */
let expired = false;
const listeners = new Set<() => void>();
let cache: { raw: string | null; user: SessionUser | undefined } = { raw: null, user: undefined };

export function getStoredUser(): SessionUser | undefined {
  let raw: string | null;
  try {
    raw = localStorage.getItem(USER_KEY);
  } catch {
    return undefined;
  }
  if (raw === cache.raw) return cache.user;
  let user: SessionUser | undefined;
  try {
    const parsed = raw ? (JSON.parse(raw) as SessionUser) : undefined;
    user = typeof parsed?.id === 'number' ? parsed : undefined;
  } catch {
    user = undefined;
  }
  cache = { raw, user };
  return user;
}

function changed(): void {
  for (const listener of listeners) listener();
}

/** The signed-in user, re-rendering on sign-in and sign-out (in this tab and others). */
export function useSessionUser(): SessionUser | undefined {
  return useSyncExternalStore(subscribe, getStoredUser);
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  const onStorage = (event: StorageEvent) => {
    if (event.key === USER_KEY || event.key === null) listener();
  };
  window.addEventListener('storage', onStorage);
  return () => {
    listeners.delete(listener);
    window.removeEventListener('storage', onStorage);
  };
}

export function storeUser(user: SessionUser): void {
  expired = false;
  localStorage.setItem(
    USER_KEY,
    JSON.stringify({
      id: user.id,
      username: user.username,
      display_name: user.display_name ?? '',
      role: user.role,
      status: user.status,
      group: user.group,
    }),
  );
  changed();
}

/** Forgets the user; `expiredSession` when the server ended the session (then sign-in says so). */
export function clearStoredUser(expiredSession = false): void {
  expired = expiredSession;
  localStorage.removeItem(USER_KEY);
  changed();
}

/** Whether the last sign-out came from the server (a 401), so /login should say the login expired. */
export function sessionWasExpired(): boolean {
  return expired;
}

export function permissionsOf(role: number | undefined): Permissions | undefined {
  if (role === undefined) return undefined;
  if (role >= ROLE.root) return 'root';
  if (role >= ROLE.admin) return 'admin';
  return 'user';
}

/** The admin check (role 10 or more). */
export const isAdmin = (permissions: unknown): boolean => permissions === 'admin' || permissions === 'root';
/** The super-admin check (role 100 or more). */
export const isRoot = (permissions: unknown): boolean => permissions === 'root';
