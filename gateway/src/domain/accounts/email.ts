import { randomInt } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import { AppError, type Language } from '../../errors.ts';
import type { Database, UserRow } from '../../store/database.ts';
import { updateUser } from '../../store/repositories/users.ts';
import type { OptionsService } from '../options/index.ts';
import { EMAIL_ERRORS } from './email-errors.ts';
import { resetMail, verificationMail } from './email-templates.ts';
import { ACCOUNT_ERRORS } from './errors.ts';
import type { Mailer, MailMessage } from './mailer.ts';
import { hashPassword } from './password.ts';
import { checkPassword } from './rules.ts';
import type { SessionService } from './sessions.ts';
import { CODE_TTL_MS, type VerificationCodes, type VerificationPurpose } from './verification.ts';

export interface EmailServiceDeps {
  db: Kysely<Database>;
  options: OptionsService;
  verification: VerificationCodes;
  mailer: Mailer;
  sessions: SessionService;
}

const CODE_MINUTES = CODE_TTL_MS / 60_000;
const RESET_PASSWORD_LENGTH = 12;
const PASSWORD_ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
/**
 * A plain address, nothing nodemailer would read as a list or a display name (no comma, space, <, ",
 * quotes), and an ASCII domain of at least two labels.
 */
const ADDRESS =
  /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z0-9-]{2,63}$/;
const MAX_ADDRESS_LENGTH = 254;

/**
 * The email flows of spec doc 1 §4/§7 and doc 2 §7: codes for sign-up and for binding an address,
 * and password reset by a mailed link. Codes live in VerificationCodes; mail goes through the Mailer.
 */
export class EmailService {
  readonly #db: Kysely<Database>;
  readonly #options: OptionsService;
  readonly #verification: VerificationCodes;
  readonly #mailer: Mailer;
  readonly #sessions: SessionService;

  constructor(deps: EmailServiceDeps) {
    this.#db = deps.db;
    this.#options = deps.options;
    this.#verification = deps.verification;
    this.#mailer = deps.mailer;
    this.#sessions = deps.sessions;
  }

  /** Mails a sign-up code to an address that no live user has yet. */
  async sendVerificationCode(email: string | undefined, language: Language = 'zh'): Promise<void> {
    const address = this.#allowed(email);
    if (await this.#owner(address)) throw new AppError(ACCOUNT_ERRORS.EMAIL_TAKEN);
    await this.#mailCode('register', address, language);
  }

  /** Mails a code for `user` to bind `email`; refused if another live user has that address. */
  async sendBindCode(user: UserRow, email: string | undefined, language: Language = 'zh'): Promise<void> {
    const address = this.#allowed(email);
    if (await this.#owner(address, user.id)) throw new AppError(ACCOUNT_ERRORS.EMAIL_TAKEN);
    await this.#mailCode('bind', address, language);
  }

  /** Sets the user's email once the code mailed to it is given back. */
  async bindEmail(user: UserRow, email: string | undefined, code: string | undefined): Promise<UserRow> {
    if (!email?.trim() || !code?.trim()) throw new AppError(ACCOUNT_ERRORS.EMAIL_AND_CODE_REQUIRED);
    const address = this.#allowed(email);
    if (await this.#owner(address, user.id)) throw new AppError(ACCOUNT_ERRORS.EMAIL_TAKEN);
    // new-api's console asks GET /api/verification for the bind code too, so a sign-up code for the same
    // address proves the mailbox just as well.
    const proven =
      (await this.#verification.consume('bind', address, code)) ||
      (await this.#verification.consume('register', address, code));
    if (!proven) throw new AppError(ACCOUNT_ERRORS.VERIFICATION_CODE_INVALID);
    const updated = await updateUser(this.#db, user.id, { email: address });
    if (!updated) throw new AppError(ACCOUNT_ERRORS.USER_NOT_FOUND);
    return updated;
  }

  /**
   * Mails a reset link if a live user has the address. Unknown addresses get the same answer (and the
   * same resend lock) but no mail, so the call does not tell who has an account.
   */
  async sendResetLink(email: string | undefined, language: Language = 'zh'): Promise<void> {
    const address = checkAddress(email);
    if (!this.#mailer.configured) throw new AppError(EMAIL_ERRORS.MAIL_NOT_CONFIGURED);
    const token = await this.#verification.issue('reset', address, 'token');
    if (!(await this.#owner(address))) return;
    const base = this.#options.get('ServerAddress').replace(/\/+$/, '');
    const link = `${base}/user/reset?email=${encodeURIComponent(address)}&token=${encodeURIComponent(token)}`;
    const systemName = this.#options.get('SystemName');
    await this.#deliver('reset', address, resetMail(language, address, { systemName, link, minutes: CODE_MINUTES }));
  }

  /**
   * Uses up the reset token and gives the user a new random password, which is returned (new-api shows
   * it on the reset page); every session of the user ends, as after any password change by someone else.
   */
  async resetPassword(email: string | undefined, token: string | undefined): Promise<string> {
    const address = checkAddress(email);
    if (!token?.trim()) throw new AppError(EMAIL_ERRORS.RESET_LINK_INVALID);
    if (!(await this.#verification.consume('reset', address, token))) {
      throw new AppError(EMAIL_ERRORS.RESET_LINK_INVALID);
    }
    const user = await this.#owner(address);
    if (!user) throw new AppError(EMAIL_ERRORS.RESET_LINK_INVALID);
    const password = checkPassword(randomPassword());
    await updateUser(this.#db, user.id, { password: await hashPassword(password) });
    await this.#sessions.revokeAll(user.id);
    return password;
  }

  /** The address, checked against the administrator's domain whitelist and alias rule. */
  #allowed(email: string | undefined): string {
    const address = checkAddress(email);
    const at = address.lastIndexOf('@');
    const local = address.slice(0, at);
    const domain = address.slice(at + 1).toLowerCase();
    if (this.#options.getBoolean('EmailDomainRestrictionEnabled')) {
      const whitelist = this.#options
        .get('EmailDomainWhitelist')
        .split(',')
        .map((entry) => entry.trim().toLowerCase())
        .filter(Boolean);
      if (!whitelist.includes(domain)) {
        throw new AppError(EMAIL_ERRORS.EMAIL_DOMAIN_NOT_ALLOWED, { domains: whitelist.join(', ') });
      }
    }
    if (this.#options.getBoolean('EmailAliasRestrictionEnabled') && local.includes('+')) {
      throw new AppError(EMAIL_ERRORS.EMAIL_ALIAS_NOT_ALLOWED);
    }
    return address;
  }

  /** The live user with this address, compared without case (mail providers ignore it too). */
  #owner(address: string, exceptUserId?: number): Promise<UserRow | undefined> {
    let query = this.#db
      .selectFrom('users')
      .selectAll()
      .where('deleted_at', 'is', null)
      .where(sql<string>`lower(email)`, '=', address.toLowerCase());
    if (exceptUserId !== undefined) query = query.where('id', '!=', exceptUserId);
    return query.orderBy('id').executeTakeFirst();
  }

  async #mailCode(purpose: VerificationPurpose, address: string, language: Language): Promise<void> {
    // Checked before a code and its resend lock are stored: an unconfigured server leaves nothing behind.
    if (!this.#mailer.configured) throw new AppError(EMAIL_ERRORS.MAIL_NOT_CONFIGURED);
    const code = await this.#verification.issue(purpose, address, 'digits');
    const systemName = this.#options.get('SystemName');
    await this.#deliver(
      purpose,
      address,
      verificationMail(language, address, { systemName, code, minutes: CODE_MINUTES }),
    );
  }

  /** Sends; if that fails the code is withdrawn, so the visitor can retry at once instead of in 30 s. */
  async #deliver(purpose: VerificationPurpose, address: string, message: MailMessage): Promise<void> {
    try {
      await this.#mailer.send(message);
    } catch (error) {
      await this.#verification.withdraw(purpose, address);
      throw error;
    }
  }
}

/** A trimmed, plausible single address, or a 400 that says what is wrong. */
export function checkAddress(email: string | undefined): string {
  const address = email?.trim() ?? '';
  if (address === '') throw new AppError(EMAIL_ERRORS.EMAIL_REQUIRED);
  if (address.length > MAX_ADDRESS_LENGTH || !ADDRESS.test(address)) throw new AppError(EMAIL_ERRORS.EMAIL_INVALID);
  return address;
}

function randomPassword(): string {
  let password = '';
  for (let i = 0; i < RESET_PASSWORD_LENGTH; i++) password += PASSWORD_ALPHABET[randomInt(PASSWORD_ALPHABET.length)];
  return password;
}
