import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Bus } from '../../cluster/index.ts';
import { AppError } from '../../errors.ts';
import type { OutboundGuard } from '../../http/outbound/guard.ts';
import { OutboundRefused } from '../../http/outbound/policy.ts';
import type { Database, UserRow, UserUpdate } from '../../store/database.ts';
import { deletePasskeyOfUser } from '../../store/repositories/passkeys.ts';
import { withLeasedQuota } from '../../store/repositories/quota-leases.ts';
import { findLiveUserBy, findLiveUserById, updateUser } from '../../store/repositories/users.ts';
import { announceAuthChange } from '../auth-changes.ts';
import { type GroupInfo, usableGroups } from '../groups.ts';
import type { Keyring } from '../keyring.ts';
import type { OptionsService } from '../options/index.ts';
import { ACCOUNT_ERRORS } from './errors.ts';
import { hashPassword, verifyPassword } from './password.ts';
import { isUniqueViolation, randomAffCode } from './registration.ts';
import { checkDisplayName, checkPassword, checkUsername, ROLE } from './rules.ts';
import type { SessionService } from './sessions.ts';
import { readSetting, type UserSettingInput, writeSetting } from './settings.ts';

export interface SelfUpdate {
  username?: string | undefined;
  display_name?: string | undefined;
  password?: string | undefined;
  original_password?: string | undefined;
}

const ACCESS_TOKEN_ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** What a signed-in user may do to their own account (spec doc 1 §2 "Personal settings", §5). */
export class SelfService {
  readonly #db: Kysely<Database>;
  readonly #options: OptionsService;
  readonly #sessions: SessionService;
  readonly #keyring: Keyring;
  readonly #bus: Bus | undefined;
  readonly #outbound: OutboundGuard;

  constructor(deps: {
    db: Kysely<Database>;
    options: OptionsService;
    sessions: SessionService;
    keyring: Keyring;
    outbound: OutboundGuard;
    bus?: Bus | undefined;
  }) {
    this.#bus = deps.bus;
    this.#outbound = deps.outbound;
    this.#db = deps.db;
    this.#options = deps.options;
    this.#sessions = deps.sessions;
    this.#keyring = deps.keyring;
  }

  async get(userId: number): Promise<UserRow> {
    const user = await findLiveUserById(this.#db, userId);
    if (!user) throw new AppError(ACCOUNT_ERRORS.USER_NOT_FOUND);
    return user;
  }

  /** The user with their quota as shown to them: leased quota added back (withLeasedQuota). */
  async shown(user: UserRow): Promise<UserRow> {
    return (await withLeasedQuota(this.#db, 'user', [user]))[0]!;
  }

  /** A password change signs the user out everywhere except the session that asked. */
  async update(user: UserRow, input: SelfUpdate, currentSessionHash?: string): Promise<UserRow> {
    const changes: UserUpdate = {};
    if (input.username !== undefined && input.username.trim() !== user.username) {
      const username = checkUsername(input.username);
      if (await findLiveUserBy(this.#db, 'username', username)) throw new AppError(ACCOUNT_ERRORS.USERNAME_TAKEN);
      changes.username = username;
    }
    if (input.display_name !== undefined) changes.display_name = checkDisplayName(input.display_name, user.username);
    const changingPassword = input.password !== undefined && input.password !== '';
    if (changingPassword) {
      const password = input.password ?? '';
      const original = input.original_password ?? '';
      if (original === '') throw new AppError(ACCOUNT_ERRORS.ORIGINAL_PASSWORD_REQUIRED);
      if (!(await verifyPassword(original, user.password))) throw new AppError(ACCOUNT_ERRORS.ORIGINAL_PASSWORD_WRONG);
      if (password === original) throw new AppError(ACCOUNT_ERRORS.PASSWORD_UNCHANGED);
      changes.password = await hashPassword(checkPassword(password));
    }
    if (Object.keys(changes).length === 0) return user;
    let updated: UserRow | undefined;
    try {
      updated = await updateUser(this.#db, user.id, changes);
    } catch (error) {
      if (isUniqueViolation(error)) throw new AppError(ACCOUNT_ERRORS.USERNAME_TAKEN);
      throw error;
    }
    if (changingPassword) await this.#sessions.revokeAll(user.id, currentSessionHash);
    return updated ?? user;
  }

  /**
   * Deregisters the account. The signed-in caller's request is the consent (new-api asks nothing more);
   * a confirmation, when given (our console sends the username the user typed), must be their username.
   */
  async delete(user: UserRow, confirmation: string | undefined): Promise<void> {
    if (user.role >= ROLE.root) throw new AppError(ACCOUNT_ERRORS.ROOT_PROTECTED);
    if (confirmation !== undefined && confirmation.trim() !== user.username) {
      throw new AppError(ACCOUNT_ERRORS.DELETE_CONFIRMATION_MISMATCH);
    }
    await this.#db.transaction().execute(async (trx) => {
      await updateUser(trx, user.id, { deleted_at: Math.floor(Date.now() / 1000), access_token_hmac: null });
      await deletePasskeyOfUser(trx, user.id);
    });
    await this.#sessions.revokeAll(user.id);
    await announceAuthChange(this.#bus, { users: [user.id] });
  }

  /** A new personal access token, shown once; the previous one stops working. */
  async regenerateAccessToken(user: UserRow): Promise<string> {
    const bytes = randomBytes(32);
    const token = Array.from(bytes, (b) => ACCESS_TOKEN_ALPHABET[b % ACCESS_TOKEN_ALPHABET.length]).join('');
    await updateUser(this.#db, user.id, { access_token_hmac: this.#keyring.hmac(token) });
    return token;
  }

  /** The user's invitation code, created on first request for accounts that have none. */
  async affCode(user: UserRow): Promise<string> {
    if (user.aff_code) return user.aff_code;
    for (let attempt = 0; ; attempt++) {
      try {
        const code = randomAffCode();
        await updateUser(this.#db, user.id, { aff_code: code });
        return code;
      } catch (error) {
        if (!isUniqueViolation(error) || attempt >= 5) throw error;
      }
    }
  }

  /** Moves affiliate earnings into quota, atomically: two transfers at once cannot spend the same earnings. */
  async transferAffQuota(user: UserRow, amount: number): Promise<void> {
    const minimum = this.#options.getNumber('QuotaPerUnit');
    if (!Number.isSafeInteger(amount) || amount < minimum) {
      throw new AppError(ACCOUNT_ERRORS.TRANSFER_TOO_SMALL, { min: minimum });
    }
    const moved = await this.#db
      .updateTable('users')
      .set((eb) => ({ aff_quota: eb('aff_quota', '-', amount), quota: eb('quota', '+', amount) }))
      .where('id', '=', user.id)
      .where('aff_quota', '>=', amount)
      .executeTakeFirst();
    if (moved.numUpdatedRows === 0n) throw new AppError(ACCOUNT_ERRORS.TRANSFER_EXCEEDS_BALANCE);
  }

  async saveSetting(user: UserRow, input: UserSettingInput): Promise<void> {
    const setting = writeSetting(input, readSetting(user.setting, this.#keyring), this.#keyring);
    const saved = readSetting(setting, this.#keyring);
    for (const url of [saved.webhook_url, saved.bark_url, saved.gotify_url]) await this.#checkAddress(url);
    await updateUser(this.#db, user.id, { setting });
  }

  /**
   * A webhook, Bark or Gotify address the gateway would refuse to call is refused now, where the user can fix it. A name that
   * does not resolve yet is let through: delivery checks again, and the host may simply not exist yet.
   */
  async #checkAddress(url: string): Promise<void> {
    if (url === '') return;
    try {
      await this.#outbound.check(url);
    } catch (error) {
      if (!(error instanceof OutboundRefused) || error.reason !== 'dns') throw error;
    }
  }

  groups(user: UserRow): Record<string, GroupInfo> {
    return usableGroups(this.#options, user.group);
  }

  /** Models the user can reach: any enabled channel serving one of their usable groups. */
  async models(user: UserRow): Promise<string[]> {
    const groups = Object.keys(this.groups(user));
    const rows = await this.#db
      .selectFrom('abilities')
      .select('model')
      .distinct()
      .where('group', 'in', groups)
      .where('enabled', '=', true)
      .orderBy('model')
      .execute();
    return rows.map((r) => r.model);
  }
}
