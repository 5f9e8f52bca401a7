import type { Kysely } from 'kysely';
import { AppError } from '../../errors.ts';
import type { Database, UserRow } from '../../store/database.ts';
import { findLiveUserByLogin, updateUser } from '../../store/repositories/users.ts';
import type { OptionsService } from '../options/index.ts';
import { ACCOUNT_ERRORS } from './errors.ts';
import { verifyPassword } from './password.ts';
import { ROLE, USER_STATUS } from './rules.ts';
import type { SessionService } from './sessions.ts';

/** Passwords the ancestors of new-api gave the root account out of the box. */
const WELL_KNOWN_DEFAULT_PASSWORDS = ['123456'];

export interface Client {
  ip: string;
  userAgent: string;
}

export interface SignedIn {
  user: UserRow;
  sessionId: string;
  /** The root signed in with a well-known default password (spec doc 1 §5: warn to change it). */
  usesDefaultPassword: boolean;
}

export class LoginService {
  readonly #db: Kysely<Database>;
  readonly #options: OptionsService;
  readonly #sessions: SessionService;

  constructor(deps: { db: Kysely<Database>; options: OptionsService; sessions: SessionService }) {
    this.#db = deps.db;
    this.#options = deps.options;
    this.#sessions = deps.sessions;
  }

  /**
   * The password sign-in's first factor: who the username and password prove to be. It opens no session:
   * the route does (startSession), or asks for the second factor first (two-factor sign-in).
   */
  async checkPassword(input: {
    username?: string | undefined;
    password?: string | undefined;
  }): Promise<Omit<SignedIn, 'sessionId'>> {
    if (!this.#options.getBoolean('PasswordLoginEnabled')) throw new AppError(ACCOUNT_ERRORS.PASSWORD_LOGIN_DISABLED);
    const login = input.username?.trim() ?? '';
    const password = input.password ?? '';
    if (login === '' || password === '') throw new AppError(ACCOUNT_ERRORS.USERNAME_AND_PASSWORD_REQUIRED);
    const user = await findLiveUserByLogin(this.#db, login);
    // One message for unknown user, wrong password and banned user: no account enumeration.
    if (!user || !(await verifyPassword(password, user.password)) || user.status !== USER_STATUS.enabled) {
      throw new AppError(ACCOUNT_ERRORS.LOGIN_FAILED);
    }
    return { user, usesDefaultPassword: user.role >= ROLE.root && WELL_KNOWN_DEFAULT_PASSWORDS.includes(password) };
  }

  /** Opens a session for a user who proved who they are (password or a third-party account). */
  async startSession(user: UserRow, client: Client): Promise<{ user: UserRow; sessionId: string }> {
    if (user.status !== USER_STATUS.enabled) throw new AppError(ACCOUNT_ERRORS.USER_BANNED);
    const sessionId = await this.#sessions.create(user.id, client);
    const updated = await updateUser(this.#db, user.id, { last_login_at: Math.floor(Date.now() / 1000) });
    return { user: updated ?? user, sessionId };
  }
}
