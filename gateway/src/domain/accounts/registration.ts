import { randomBytes } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { AppError } from '../../errors.ts';
import type { Database, UserRow } from '../../store/database.ts';
import { insertLog, LOG_TYPE } from '../../store/repositories/logs.ts';
import { findLiveUserBy, insertUser } from '../../store/repositories/users.ts';
import type { OptionsService } from '../options/index.ts';
import { ACCOUNT_ERRORS } from './errors.ts';
import type { IdentityColumn } from './oauth/types.ts';
import { hashPassword } from './password.ts';
import { checkPassword, checkUsername } from './rules.ts';

export interface RegistrationInput {
  username?: string | undefined;
  password?: string | undefined;
  password2?: string | undefined;
  email?: string | undefined;
  verification_code?: string | undefined;
  aff_code?: string | undefined;
}

/** Checks a mailed verification code and uses it up; provided by the email module. */
export type ConsumeEmailCode = (purpose: 'register', email: string, code: string) => Promise<boolean>;

/** What a new account starts with, wherever it comes from (password sign-up or a third-party account). */
export interface NewAccount {
  username: string;
  passwordHash: string;
  displayName?: string;
  email?: string;
  affCode?: string | undefined;
  /** Third-party identity column to fill, e.g. { github_id: '123' }. */
  identity?: Partial<Pick<UserRow, IdentityColumn>>;
  /** Runs in the account's transaction, e.g. to store a custom provider's binding with the new user. */
  afterInsert?: ((trx: Transaction<Database>, user: UserRow) => Promise<void>) | undefined;
  /** An administrator's choice of role (already checked against their own); a common user when absent. */
  role?: number | undefined;
}

const now = () => Math.floor(Date.now() / 1000);
const AFF_CODE_ALPHABET = 'abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789';

export function randomAffCode(length = 6): string {
  const bytes = randomBytes(length);
  return Array.from(bytes, (b) => AFF_CODE_ALPHABET[b % AFF_CODE_ALPHABET.length]).join('');
}

/** Sign-up with a password (spec doc 1 §5), and account creation shared with the OAuth sign-ins. */
export class RegistrationService {
  readonly #db: Kysely<Database>;
  readonly #options: OptionsService;
  readonly #consumeEmailCode: ConsumeEmailCode;

  constructor(deps: { db: Kysely<Database>; options: OptionsService; consumeEmailCode: ConsumeEmailCode }) {
    this.#db = deps.db;
    this.#options = deps.options;
    this.#consumeEmailCode = deps.consumeEmailCode;
  }

  async register(input: RegistrationInput): Promise<UserRow> {
    if (!this.#options.getBoolean('RegisterEnabled')) throw new AppError(ACCOUNT_ERRORS.REGISTER_DISABLED);
    if (!this.#options.getBoolean('PasswordRegisterEnabled'))
      throw new AppError(ACCOUNT_ERRORS.PASSWORD_REGISTER_DISABLED);
    if (!input.username?.trim() || !input.password) throw new AppError(ACCOUNT_ERRORS.USERNAME_AND_PASSWORD_REQUIRED);
    const username = checkUsername(input.username);
    const password = checkPassword(input.password);
    if (input.password2 !== undefined && input.password2 !== password)
      throw new AppError(ACCOUNT_ERRORS.PASSWORD_MISMATCH);

    let email = '';
    if (this.#options.getBoolean('EmailVerificationEnabled')) {
      email = input.email?.trim() ?? '';
      const code = input.verification_code?.trim() ?? '';
      if (email === '' || code === '') throw new AppError(ACCOUNT_ERRORS.EMAIL_AND_CODE_REQUIRED);
      if (await findLiveUserBy(this.#db, 'email', email)) throw new AppError(ACCOUNT_ERRORS.EMAIL_TAKEN);
      if (await findLiveUserBy(this.#db, 'username', username)) throw new AppError(ACCOUNT_ERRORS.USERNAME_TAKEN);
      if (!(await this.#consumeEmailCode('register', email, code))) {
        throw new AppError(ACCOUNT_ERRORS.VERIFICATION_CODE_INVALID);
      }
    }
    return this.createAccount({
      username,
      passwordHash: await hashPassword(password),
      email,
      affCode: input.aff_code,
    });
  }

  /**
   * Creates the account with its sign-up grants: QuotaForNewUser, plus QuotaForInvitee for the invitee
   * and QuotaForInviter (as transferable affiliate earnings) for the inviter, in one transaction.
   */
  async createAccount(account: NewAccount): Promise<UserRow> {
    const o = this.#options;
    const affCode = account.affCode?.trim();
    const inviter = affCode ? await findLiveUserBy(this.#db, 'aff_code', affCode) : undefined;
    if (affCode && !inviter) throw new AppError(ACCOUNT_ERRORS.INVITE_CODE_INVALID);
    const forNewUser = o.getNumber('QuotaForNewUser');
    const forInvitee = inviter ? o.getNumber('QuotaForInvitee') : 0;
    const forInviter = inviter ? o.getNumber('QuotaForInviter') : 0;

    return this.#db.transaction().execute(async (trx) => {
      if (await findLiveUserBy(trx, 'username', account.username)) throw new AppError(ACCOUNT_ERRORS.USERNAME_TAKEN);
      let user: UserRow;
      try {
        user = await insertUser(trx, {
          username: account.username,
          password: account.passwordHash,
          display_name: account.displayName || account.username,
          email: account.email ?? '',
          quota: forNewUser + forInvitee,
          inviter_id: inviter?.id ?? 0,
          aff_code: randomAffCode(),
          created_at: now(),
          ...(account.role === undefined ? {} : { role: account.role }),
          ...account.identity,
        });
      } catch (error) {
        // Two sign-ups racing for one name: the unique index decides, the loser gets the usual message.
        if (isUniqueViolation(error)) throw new AppError(ACCOUNT_ERRORS.USERNAME_TAKEN);
        throw error;
      }
      await account.afterInsert?.(trx, user);
      if (forNewUser > 0) {
        await insertLog(trx, systemLog(user, `新用户注册赠送 ${forNewUser} 额度`));
      }
      if (inviter) {
        if (forInvitee > 0) await insertLog(trx, systemLog(user, `使用邀请码赠送 ${forInvitee} 额度`));
        await trx
          .updateTable('users')
          .set((eb) => ({
            aff_count: eb('aff_count', '+', 1),
            aff_quota: eb('aff_quota', '+', forInviter),
            aff_history_quota: eb('aff_history_quota', '+', forInviter),
          }))
          .where('id', '=', inviter.id)
          .execute();
        if (forInviter > 0) await insertLog(trx, systemLog(inviter, `邀请用户赠送 ${forInviter} 额度`));
      }
      return user;
    });
  }
}

function systemLog(user: UserRow, content: string) {
  return { user_id: user.id, username: user.username, created_at: now(), type: LOG_TYPE.system, content };
}

export function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: unknown })?.code === '23505';
}
