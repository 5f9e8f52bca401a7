import type { AuthProvider, UserIdentity } from 'react-admin';
import { api, EXPIRED_LOGIN_PATH } from './http.ts';
import {
  clearStoredUser,
  getStoredUser,
  isAdmin,
  permissionsOf,
  type SessionUser,
  sessionWasExpired,
  storeUser,
} from './session.ts';

/** Resources only administrators may open (spec doc 1 §6): react-admin asks `canAccess` before showing them. */
export const ADMIN_RESOURCES = new Set(['channel', 'redemption', 'user']);

/** Where sign-in leads (spec doc 1 §2: /token is the redirect target after login). */
export const AFTER_LOGIN_PATH = '/token';

/** The login page at its second step, for sign-ins that need a two-factor code (e.g. after OAuth). */
export const SECOND_STEP_PATH = '/login?two_factor=1';

/** Thrown by `login` when the user has two-factor sign-in: POST /api/user/login/2fa with a code ends it. */
export class SecondFactorNeeded extends Error {}

export interface LoginParams {
  username?: string;
  password?: string;
  /** The human-check token, when the status enables Turnstile. */
  turnstile?: string;
  /** A user already signed in elsewhere (OAuth callbacks): just keep it. */
  user?: SessionUser;
}

/**
 * The console's single auth provider, over the gateway's session API: POST /api/user/login sets the
 * session cookie and answers the user, which is kept locally (its id goes into New-Api-User);
 * GET /api/user/logout ends the session; GET /api/user/self is the identity.
 */
export const authProvider: AuthProvider = {
  async login(params: LoginParams) {
    if (params.user) {
      storeUser(params.user);
      return { redirectTo: AFTER_LOGIN_PATH };
    }
    const envelope = await api.request<SessionUser | { require_2fa: true }>('POST', '/api/user/login', {
      query: { turnstile: params.turnstile ?? '' },
      body: { username: params.username ?? '', password: params.password ?? '' },
      expireOn401: false,
    });
    if (!envelope.data) throw new Error(envelope.message);
    // Two-factor sign-in: the password passed, the login page now asks for the code.
    if ('require_2fa' in envelope.data) throw new SecondFactorNeeded(envelope.message);
    storeUser(envelope.data);
    // The message is "login successful", or the warning about the default root password.
    return { redirectTo: AFTER_LOGIN_PATH, message: envelope.message };
  },

  async logout() {
    // No stored user: already signed out, e.g. by a 401 (checkError), which must stay "expired".
    if (!getStoredUser()) return sessionWasExpired() ? EXPIRED_LOGIN_PATH : undefined;
    try {
      await api.get('/api/user/logout', { expireOn401: false });
    } catch {
      // The session may already be gone; signing out locally is what matters.
    }
    clearStoredUser();
  },

  async checkAuth() {
    // After a 401 the way out is the expired-login page, whichever of react-admin's checks gets there first.
    if (!getStoredUser()) throw { redirectTo: sessionWasExpired() ? EXPIRED_LOGIN_PATH : '/login', message: false };
  },

  async checkError(error: { status?: number }) {
    if (error?.status === 401) {
      clearStoredUser(true);
      throw { redirectTo: EXPIRED_LOGIN_PATH, message: false };
    }
    // 403 and others: the page shows the message, the user stays signed in.
  },

  async getIdentity(): Promise<UserIdentity> {
    const stored = getStoredUser();
    if (!stored) throw new Error('not signed in');
    const self = await api.get<SessionUser>('/api/user/self');
    storeUser(self);
    return { ...self, fullName: self.display_name || self.username };
  },

  async getPermissions() {
    return permissionsOf(getStoredUser()?.role);
  },

  async canAccess({ resource }: { resource: string }) {
    if (!ADMIN_RESOURCES.has(resource)) return true;
    return isAdmin(permissionsOf(getStoredUser()?.role));
  },
};
