import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { ACCOUNT_ERRORS } from '../domain/accounts/errors.ts';
import { ROLE, USER_STATUS } from '../domain/accounts/rules.ts';
import type { SessionService } from '../domain/accounts/sessions.ts';
import { TWO_FACTOR_ERRORS } from '../domain/accounts/two-factor/errors.ts';
import type { TwoFactorService } from '../domain/accounts/two-factor/service.ts';
import type { Keyring } from '../domain/keyring.ts';
import { AppError } from '../errors.ts';
import { requestCookie } from '../http/cookies.ts';
import type { Database, UserRow } from '../store/database.ts';
import { findLiveUserBy } from '../store/repositories/users.ts';

export const SESSION_COOKIE = 'session';
const USER_HEADER = 'new-api-user';

export interface Auth {
  user: UserRow;
  /** Set when signed in with the session cookie (absent for personal access tokens). */
  sessionIdHash?: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth: Auth | null;
  }
}

export interface AuthDeps {
  db: Kysely<Database>;
  sessions: SessionService;
  keyring: Keyring;
  twoFactor: Pick<TwoFactorService, 'blocksAdmin' | 'requireRecentVerification'>;
}

/**
 * Dashboard authentication (reference §3.4): the session cookie, or a personal access token in
 * Authorization; either way the New-Api-User header must name the same user, which also keeps other
 * sites from riding the cookie (they cannot set custom headers).
 */
export function authGuards(deps: AuthDeps) {
  const guard = (minimumRole: number) => async (request: FastifyRequest) => {
    const auth = await authenticate(request, deps);
    if (auth.user.status !== USER_STATUS.enabled) throw new AppError(ACCOUNT_ERRORS.USER_BANNED);
    if (auth.user.role < minimumRole) throw new AppError(ACCOUNT_ERRORS.FORBIDDEN);
    // With TwoFactorRequiredForAdmins, an administrator without a second factor keeps only user routes.
    if (minimumRole >= ROLE.admin && (await deps.twoFactor.blocksAdmin(auth.user))) {
      throw new AppError(TWO_FACTOR_ERRORS.two_factor_required);
    }
    request.auth = auth;
  };
  /** For public routes that answer more to a signed-in caller: no valid sign-in just means a visitor. */
  const optional = async (request: FastifyRequest) => {
    if (!requestCookie(request, SESSION_COOKIE) && !request.headers.authorization) return;
    try {
      await guard(1)(request);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      request.auth = null;
    }
  };
  /**
   * After another guard, before sensitive actions (revealing keys, another user's quota, deleting
   * channels): a user with two-factor sign-in or a passkey must have passed POST /api/verify in the last minutes.
   */
  const stepUp = async (request: FastifyRequest) => deps.twoFactor.requireRecentVerification(signedIn(request));
  return { user: guard(1), admin: guard(10), root: guard(100), optional, stepUp };
}

async function authenticate(request: FastifyRequest, deps: AuthDeps): Promise<Auth> {
  let auth: Auth;
  const authorization = request.headers.authorization?.trim();
  if (authorization) {
    const token = authorization.replace(/^bearer\s+/i, '');
    const user = token ? await findLiveUserBy(deps.db, 'access_token_hmac', deps.keyring.hmac(token)) : undefined;
    if (!user) throw new AppError(ACCOUNT_ERRORS.ACCESS_TOKEN_INVALID);
    auth = { user };
  } else {
    const sessionId = requestCookie(request, SESSION_COOKIE);
    const session = sessionId ? await deps.sessions.resolve(sessionId, request.ip) : undefined;
    if (!session) throw new AppError(ACCOUNT_ERRORS.NOT_LOGGED_IN);
    auth = { user: session.user, sessionIdHash: session.idHash };
  }
  const claimed = request.headers[USER_HEADER];
  if (claimed === undefined || claimed === '') throw new AppError(ACCOUNT_ERRORS.USER_HEADER_MISSING);
  if (String(claimed).trim() !== String(auth.user.id)) throw new AppError(ACCOUNT_ERRORS.USER_HEADER_MISMATCH);
  return auth;
}

/** The signed-in user; only call behind one of the guards. */
export function signedIn(request: FastifyRequest): Auth {
  if (!request.auth) throw new AppError(ACCOUNT_ERRORS.NOT_LOGGED_IN);
  return request.auth;
}

export function setSessionCookie(
  request: FastifyRequest,
  reply: FastifyReply,
  sessionId: string,
  maxAgeSeconds: number,
) {
  reply.setCookie(SESSION_COOKIE, sessionId, {
    path: '/',
    httpOnly: true,
    sameSite: 'strict',
    // Secure whenever the client reached us over TLS (directly or, with TRUST_PROXY, through the ingress).
    secure: request.protocol === 'https',
    maxAge: maxAgeSeconds,
  });
}

export function clearSessionCookie(reply: FastifyReply) {
  reply.clearCookie(SESSION_COOKIE, { path: '/' });
}
