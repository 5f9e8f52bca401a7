import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database, UserRow } from '../../store/database.ts';
import {
  deleteExpiredSessions,
  findActiveSession,
  insertSession,
  revokeSession,
  revokeUserSessions,
  touchSession,
} from '../../store/repositories/sessions.ts';

/** last_seen_at is a hint for admins, not worth a write per request. */
const TOUCH_EVERY_SECONDS = 60;

const now = () => Math.floor(Date.now() / 1000);
const digest = (sessionId: string) => createHash('sha256').update(sessionId).digest('base64url');

export interface ActiveSession {
  idHash: string;
  user: UserRow;
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

  async resolve(sessionId: string): Promise<ActiveSession | undefined> {
    const idHash = digest(sessionId);
    const t = now();
    const found = await findActiveSession(this.#db, idHash, t);
    if (!found) return undefined;
    if (t - found.session.last_seen_at >= TOUCH_EVERY_SECONDS) await touchSession(this.#db, idHash, t);
    return { idHash, user: found.user };
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
