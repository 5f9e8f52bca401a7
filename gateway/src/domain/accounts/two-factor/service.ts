import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { AppError } from '../../../errors.ts';
import type { Database, UserRow } from '../../../store/database.ts';
import {
  acceptStep,
  countEnabledTwoFactor,
  deleteChallenge,
  deleteTwoFactor,
  findTwoFactor,
  insertChallenge,
  markSessionVerified,
  markTokenVerified,
  recordWrongCode,
  replaceBackupCodes,
  savePendingTwoFactor,
  sessionVerifiedUntil,
  takeChallengeAttempt,
  unusedBackupCodeCount,
  useBackupCode,
} from '../../../store/repositories/two-factor.ts';
import { findLiveUserById } from '../../../store/repositories/users.ts';
import type { Keyring } from '../../keyring.ts';
import type { OptionsService } from '../../options/index.ts';
import { ACCOUNT_ERRORS } from '../errors.ts';
import { PASSKEY_ERRORS } from '../passkeys/errors.ts';
import type { PasskeyService } from '../passkeys/service.ts';
import { assertOutranks } from '../permissions.ts';
import { ROLE, USER_STATUS } from '../rules.ts';
import { looksLikeBackupCode, newBackupCodes, normalizeBackupCode } from './backup-codes.ts';
import { TWO_FACTOR_ERRORS } from './errors.ts';
import { matchingStep, newSecret, otpauthUrl } from './totp.ts';

/** Wrong codes in a row before the factor is locked, and for how long. */
export const MAX_WRONG_CODES = 5;
export const LOCK_SECONDS = 300;
/** A pending sign-in (password passed, code not yet) lives this long and allows this many codes. */
export const CHALLENGE_SECONDS = 300;
export const CHALLENGE_ATTEMPTS = 5;
/** How long a step-up verification lets sensitive actions through (new-api's secure verification). */
export const VERIFIED_SECONDS = 300;

const now = () => Math.floor(Date.now() / 1000);
const digest = (token: string) => createHash('sha256').update(token).digest('base64url');

/** Who is acting: the user, and the session when signed in with the cookie (access tokens have none). */
export interface Actor {
  user: UserRow;
  sessionIdHash?: string | undefined;
}

/**
 * TOTP two-factor sign-in with one-time backup codes (RFC 6238, issue 19): setup, enable, disable,
 * the pending sign-in between password and code, step-up verification before sensitive actions, and
 * the administrators' rule and tools. Secrets are encrypted by the keyring; codes are stored as digests.
 */
export class TwoFactorService {
  readonly #db: Kysely<Database>;
  readonly #keyring: Keyring;
  readonly #options: OptionsService;
  readonly #passkeys: Pick<PasskeyService, 'canVerify' | 'takeVerification'> | undefined;

  constructor(deps: {
    db: Kysely<Database>;
    keyring: Keyring;
    options: OptionsService;
    /** Step-up by passkey (`method: "passkey"`): absent, only codes verify. */
    passkeys?: Pick<PasskeyService, 'canVerify' | 'takeVerification'>;
  }) {
    this.#db = deps.db;
    this.#keyring = deps.keyring;
    this.#options = deps.options;
    this.#passkeys = deps.passkeys;
  }

  async isEnabled(userId: number): Promise<boolean> {
    return (await findTwoFactor(this.#db, userId))?.enabled === true;
  }

  async status(userId: number) {
    const row = await findTwoFactor(this.#db, userId);
    const enabled = row?.enabled === true;
    const locked = (row?.locked_until ?? 0) > now();
    if (!enabled) return { enabled, locked };
    return { enabled, locked, backup_codes_remaining: await unusedBackupCodeCount(this.#db, userId) };
  }

  /** Starts (or restarts) a setup: a new secret and codes, active only once `enable` gets a code of it. */
  async setup(user: UserRow) {
    if (await this.isEnabled(user.id)) throw new AppError(TWO_FACTOR_ERRORS.two_factor_already_enabled);
    const secret = newSecret();
    const codes = newBackupCodes();
    const saved = await savePendingTwoFactor(
      this.#db,
      user.id,
      this.#keyring.encrypt(secret),
      codes.map(this.#codeHash),
      now(),
    );
    if (!saved) throw new AppError(TWO_FACTOR_ERRORS.two_factor_already_enabled);
    const issuer = this.#options.get('SystemName') || 'Tollgate';
    return { secret, qr_code_data: otpauthUrl(issuer, user.username, secret), backup_codes: codes };
  }

  async enable(userId: number, code: string | undefined): Promise<void> {
    const row = await findTwoFactor(this.#db, userId);
    if (!row) throw new AppError(TWO_FACTOR_ERRORS.two_factor_not_set_up);
    if (row.enabled) throw new AppError(TWO_FACTOR_ERRORS.two_factor_already_enabled);
    await this.#check(row, code, { backup: false, enable: true });
  }

  async disable(userId: number, code: string | undefined): Promise<void> {
    await this.verify(userId, code, { backup: true });
    await deleteTwoFactor(this.#db, userId);
  }

  async regenerateBackupCodes(userId: number, code: string | undefined): Promise<string[]> {
    await this.verify(userId, code, { backup: false });
    const codes = newBackupCodes();
    await replaceBackupCodes(this.#db, userId, codes.map(this.#codeHash));
    return codes;
  }

  /** Checks a code of an enabled factor (a backup code too when `backup`); throws when it is not good. */
  async verify(userId: number, code: string | undefined, { backup }: { backup: boolean }): Promise<void> {
    const row = await findTwoFactor(this.#db, userId);
    if (!row?.enabled) throw new AppError(TWO_FACTOR_ERRORS.two_factor_not_enabled);
    await this.#check(row, code, { backup, enable: false });
  }

  async #check(
    row: NonNullable<Awaited<ReturnType<typeof findTwoFactor>>>,
    code: string | undefined,
    { backup, enable }: { backup: boolean; enable: boolean },
  ): Promise<void> {
    const typed = (code ?? '').trim();
    if (typed === '') throw new AppError(TWO_FACTOR_ERRORS.two_factor_code_required);
    const t = now();
    if (row.locked_until > t) {
      throw new AppError(TWO_FACTOR_ERRORS.two_factor_locked, { seconds: row.locked_until - t });
    }
    const step = matchingStep(this.#keyring.decrypt(row.secret), typed.replace(/\s/g, ''), t);
    if (step !== undefined && (await acceptStep(this.#db, row.user_id, step, enable))) return;
    if (
      backup &&
      looksLikeBackupCode(typed) &&
      (await useBackupCode(this.#db, row.user_id, this.#codeHash(typed), t))
    ) {
      return;
    }
    await recordWrongCode(this.#db, row.user_id, MAX_WRONG_CODES, t + LOCK_SECONDS);
    throw new AppError(TWO_FACTOR_ERRORS.two_factor_code_invalid);
  }

  readonly #codeHash = (code: string) => this.#keyring.hmac(`2fa-backup:${normalizeBackupCode(code)}`);

  // --- sign-in ---

  /** After the password: a pending sign-in, held by the returned token; not a session. */
  async startChallenge(userId: number): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    const t = now();
    await insertChallenge(this.#db, digest(token), userId, t + CHALLENGE_SECONDS, t);
    return token;
  }

  /** The second step: the user whose pending sign-in `token` is, once `code` (or a backup code) is good. */
  async completeChallenge(token: string | undefined, code: string | undefined): Promise<UserRow> {
    const idHash = digest(token ?? '');
    const pending = token ? await takeChallengeAttempt(this.#db, idHash, now(), CHALLENGE_ATTEMPTS) : undefined;
    if (!pending) throw new AppError(TWO_FACTOR_ERRORS.two_factor_challenge_expired);
    const user = await findLiveUserById(this.#db, pending.user_id);
    if (!user || user.status !== USER_STATUS.enabled) {
      await deleteChallenge(this.#db, idHash);
      throw new AppError(ACCOUNT_ERRORS.LOGIN_FAILED);
    }
    await this.verify(user.id, code, { backup: true });
    await deleteChallenge(this.#db, idHash);
    return user;
  }

  // --- step-up verification ---

  /** Checks a code and lets this session (or access-token caller) through sensitive actions for a while. */
  async stepUp(actor: Actor, method: string | undefined, code: string | undefined) {
    if (method === 'passkey' && this.#passkeys && actor.sessionIdHash) {
      // The passkey ceremony (verify/begin, verify/finish) already ran; this turns it into the step-up.
      if (!(await this.#passkeys.takeVerification(actor))) throw new AppError(PASSKEY_ERRORS.passkey_not_verified);
    } else if (method === undefined || method === '2fa') {
      await this.verify(actor.user.id, code, { backup: true });
    } else {
      throw new AppError(TWO_FACTOR_ERRORS.verification_method_unsupported);
    }
    const until = now() + VERIFIED_SECONDS;
    if (actor.sessionIdHash) await markSessionVerified(this.#db, actor.sessionIdHash, until);
    else await markTokenVerified(this.#db, actor.user.id, until);
    return { verified: true, expires_at: until };
  }

  async verification(actor: Actor): Promise<{ verified: boolean; expires_at?: number }> {
    const until = await this.#verifiedUntil(actor);
    return until > now() ? { verified: true, expires_at: until } : { verified: false };
  }

  /** Refuses a sensitive action of a user with a second factor (code or passkey) who has not verified recently. */
  async requireRecentVerification(actor: Actor): Promise<void> {
    if (!(await this.#canStepUp(actor))) return;
    if ((await this.#verifiedUntil(actor)) <= now()) throw new AppError(TWO_FACTOR_ERRORS.verification_required);
  }

  /**
   * Whether the actor has a way to step up: a two-factor code, or (signed in with a session, as the browser
   * ceremony needs) a passkey. Users with neither are not asked, as before two-factor sign-in existed.
   */
  async #canStepUp(actor: Actor): Promise<boolean> {
    if (await this.isEnabled(actor.user.id)) return true;
    return actor.sessionIdHash !== undefined && (await this.#passkeys?.canVerify(actor.user.id)) === true;
  }

  async #verifiedUntil(actor: Actor): Promise<number> {
    if (actor.sessionIdHash) return sessionVerifiedUntil(this.#db, actor.sessionIdHash);
    return (await findTwoFactor(this.#db, actor.user.id))?.token_verified_until ?? 0;
  }

  // --- administrators ---

  /** Whether the rule "administrators need two-factor sign-in" keeps this user out of admin routes. */
  async blocksAdmin(user: UserRow): Promise<boolean> {
    if (user.role < ROLE.admin || !this.#options.getBoolean('TwoFactorRequiredForAdmins')) return false;
    return !(await this.isEnabled(user.id));
  }

  async stats() {
    const { users, enabled } = await countEnabledTwoFactor(this.#db);
    const rate = users > 0 ? (enabled / users) * 100 : 0;
    return { total_users: users, enabled_users: enabled, enabled_rate: `${rate.toFixed(1)}%` };
  }

  /** An administrator removes a lower-ranked user's factor (a lost phone and no backup codes). */
  async reset(actor: UserRow, userId: number): Promise<void> {
    const target = await findLiveUserById(this.#db, userId);
    if (!target) throw new AppError(ACCOUNT_ERRORS.USER_NOT_FOUND);
    assertOutranks(actor, target);
    if (!(await deleteTwoFactor(this.#db, userId))) throw new AppError(TWO_FACTOR_ERRORS.two_factor_not_enabled);
  }
}
