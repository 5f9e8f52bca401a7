import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { AppError, defineErrors } from '../../errors.ts';
import type { Database, UserRow } from '../../store/database.ts';
import {
  deleteExpiredSessions,
  findActiveSession,
  insertSession,
  listActiveSessions,
  revokeSession,
  revokeUserSession,
  revokeUserSessions,
  touchSession,
} from '../../store/repositories/sessions.ts';

export const SESSION_ERRORS = defineErrors({
  SESSION_NOT_FOUND: {
    status: 404,
    message: { zh: '该登录会话不存在或已失效', en: 'That sign-in session does not exist or has already ended' },
  },
});

/** last_seen_at is a hint for admins, not worth a write per request. */
const TOUCH_EVERY_SECONDS = 60;

const now = () => Math.floor(Date.now() / 1000);
const digest = (sessionId: string) => createHash('sha256').update(sessionId).digest('base64url');

export interface ActiveSession {
  idHash: string;
  user: UserRow;
}

/** One sign-in as its owner sees it; `id` is the stored digest, never the cookie's secret. */
export interface SessionInfo {
  id: string;
  createdAt: number;
  lastSeenAt: number;
  expiresAt: number;
  ip: string;
  userAgent: string;
}

/**
 * Dashboard sessions, kept in the database so that every gateway pod honours a sign-in, and a
 * sign-out, password change or ban takes effect on all of them at the next request. The cookie holds
 * a random id; only its SHA-256 is stored, so a leaked table cannot be replayed.
 */
export class SessionService {
  readonly #db: Kysely<Database>;
  readonly #ttlSeconds: number;

  constructor(db: Kysely<Database>, ttlMs: number) {
    this.#db = db;
    this.#ttlSeconds = Math.floor(ttlMs / 1000);
  }

  get ttlSeconds(): number {
    return this.#ttlSeconds;
  }

  /** Starts a session; the returned id goes into the cookie and nowhere else. */
  async create(userId: number, client: { ip: string; userAgent: string }): Promise<string> {
    const sessionId = randomBytes(32).toString('base64url');
    const t = now();
    await insertSession(this.#db, {
      id_hash: digest(sessionId),
      user_id: userId,
      created_at: t,
      last_seen_at: t,
      expires_at: t + this.#ttlSeconds,
      ip: client.ip,
      user_agent: client.userAgent.slice(0, 256),
      revoked_at: null,
      verified_until: 0,
    });
    return sessionId;
  }

  /** The session behind the cookie; `ip`, when given, is recorded with the (throttled) last-seen time. */
  async resolve(sessionId: string, ip?: string): Promise<ActiveSession | undefined> {
    const idHash = digest(sessionId);
    const t = now();
    const found = await findActiveSession(this.#db, idHash, t);
    if (!found) return undefined;
    if (t - found.session.last_seen_at >= TOUCH_EVERY_SECONDS) await touchSession(this.#db, idHash, t, ip);
    return { idHash, user: found.user };
  }

  /** The user's live sessions, most recently used first. */
  async list(userId: number): Promise<SessionInfo[]> {
    const rows = await listActiveSessions(this.#db, userId, now());
    return rows.map((row) => ({
      id: row.id_hash,
      createdAt: Number(row.created_at),
      lastSeenAt: Number(row.last_seen_at),
      expiresAt: Number(row.expires_at),
      ip: row.ip,
      userAgent: row.user_agent,
    }));
  }

  /** Signs out one session of the user, by its listed id; SESSION_NOT_FOUND when it is not one of their live ones. */
  async revokeOne(userId: number, id: string): Promise<void> {
    if (!(await revokeUserSession(this.#db, userId, id, now()))) throw new AppError(SESSION_ERRORS.SESSION_NOT_FOUND);
  }

  async revoke(sessionId: string): Promise<void> {
    await revokeSession(this.#db, digest(sessionId), now());
  }

  /** Signs the user out everywhere, except the session `keepIdHash` if given. */
  async revokeAll(userId: number, keepIdHash?: string): Promise<void> {
    await revokeUserSessions(this.#db, userId, now(), keepIdHash);
  }

  async purgeExpired(): Promise<number> {
    return deleteExpiredSessions(this.#db, now());
  }
}
