import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
import type { Kysely } from 'kysely';
import type { KeyValueStore } from '../../../cluster/types.ts';
import { AppError } from '../../../errors.ts';
import type { Database, UserRow } from '../../../store/database.ts';
import {
  deletePasskeyOfUser,
  findPasskeyByCredentialId,
  findPasskeyOfUser,
  recordPasskeyUse,
  savePasskey,
} from '../../../store/repositories/passkeys.ts';
import { findLiveUserById } from '../../../store/repositories/users.ts';
import type { OptionsService } from '../../options/index.ts';
import { keepsAnotherWayToSignIn } from '../bindings.ts';
import { ACCOUNT_ERRORS } from '../errors.ts';
import { assertOutranks } from '../permissions.ts';
import { USER_STATUS } from '../rules.ts';
import { PASSKEY_ERRORS } from './errors.ts';
import { type RelyingParty, type RequestOrigin, relyingParty } from './relying-party.ts';

/** How long a begun ceremony waits for its finish (new-api's two minutes). */
export const CEREMONY_MS = 120_000;
/** How long a passed passkey verification waits for POST /api/verify to turn it into a step-up. */
export const VERIFIED_READY_MS = 300_000;

type Purpose = 'register' | 'login' | 'verify';

/** What a begun ceremony remembers, under its challenge, in the cluster's key-value store. */
interface Pending {
  purpose: Purpose;
  userId?: number;
  /** The session (or access-token user) a verification was begun by. */
  actor?: string;
}

/** Who is acting: the user and, when signed in with the cookie, the session. */
export interface PasskeyActor {
  user: UserRow;
  sessionIdHash?: string | undefined;
}

type StoredPasskey = NonNullable<Awaited<ReturnType<typeof findPasskeyOfUser>>>;

const now = () => Math.floor(Date.now() / 1000);
const challengeKey = (challenge: string) => `passkey:challenge:${challenge}`;
const actorKey = (actor: PasskeyActor) => actor.sessionIdHash ?? `user:${actor.user.id}`;
const readyKey = (actor: PasskeyActor) => `passkey:verified:${actorKey(actor)}`;
/** The WebAuthn user handle: the user id's digits, as new-api sets it. */
const userHandle = (userId: number) => new TextEncoder().encode(String(userId));

/** Whether the user has a passkey: one of their ways to sign in (for the bindings' last-way check). */
export async function userHasPasskey(db: Kysely<Database>, userId: number): Promise<boolean> {
  return (await findPasskeyOfUser(db, userId)) !== undefined;
}

/**
 * Passkeys (WebAuthn, issue 19) in new-api's model: one per user; register, sign in without a password,
 * step-up verification, removal by the user or an administrator. Challenges live in the cluster's
 * key-value store for two minutes and are taken once, so begin and finish may reach different pods.
 */
export class PasskeyService {
  readonly #db: Kysely<Database>;
  readonly #options: OptionsService;
  readonly #kv: KeyValueStore;

  constructor(deps: { db: Kysely<Database>; options: OptionsService; kv: KeyValueStore }) {
    this.#db = deps.db;
    this.#options = deps.options;
    this.#kv = deps.kv;
  }

  get enabled(): boolean {
    return this.#options.getBoolean('passkey.enabled');
  }

  async status(userId: number) {
    const row = await findPasskeyOfUser(this.#db, userId);
    if (!row) return { enabled: false };
    const lastUsed = row.last_used_at === null ? null : new Date(row.last_used_at * 1000).toISOString();
    return { enabled: true, last_used_at: lastUsed };
  }

  // --- registration ---

  async beginRegistration(user: UserRow, origin: RequestOrigin) {
    const rp = this.#relyingParty(origin);
    const existing = await findPasskeyOfUser(this.#db, user.id);
    const publicKey = await generateRegistrationOptions({
      rpName: rp.name,
      rpID: rp.id,
      userName: user.username,
      userDisplayName: user.display_name || user.username,
      userID: userHandle(user.id),
      timeout: CEREMONY_MS,
      attestationType: 'none',
      excludeCredentials: existing ? [{ id: existing.credential_id, transports: transportsOf(existing) }] : [],
      authenticatorSelection: {
        residentKey: 'required',
        requireResidentKey: true,
        userVerification: rp.userVerification,
        ...(rp.attachment ? { authenticatorAttachment: rp.attachment } : {}),
      },
    });
    await this.#remember(publicKey.challenge, { purpose: 'register', userId: user.id });
    return { options: { publicKey } };
  }

  async finishRegistration(user: UserRow, response: RegistrationResponseJSON, origin: RequestOrigin): Promise<void> {
    const rp = this.#relyingParty(origin);
    const challenge = await this.#claim(response, { purpose: 'register', userId: user.id });
    const result = await verified(() =>
      verifyRegistrationResponse({
        response,
        expectedChallenge: challenge,
        expectedOrigin: rp.origins,
        expectedRPID: rp.id,
        requireUserVerification: rp.userVerification === 'required',
      }),
    );
    if (!result.verified) throw new AppError(PASSKEY_ERRORS.passkey_response_invalid, { reason: 'attestation' });
    const info = result.registrationInfo;
    const saved = await savePasskey(this.#db, {
      user_id: user.id,
      credential_id: info.credential.id,
      public_key: Buffer.from(info.credential.publicKey).toString('base64url'),
      sign_count: info.credential.counter,
      transports: JSON.stringify(info.credential.transports ?? response.response.transports ?? []),
      attachment: response.authenticatorAttachment ?? '',
      backup_eligible: info.credentialDeviceType === 'multiDevice',
      backup_state: info.credentialBackedUp,
      created_at: now(),
    });
    if (!saved) throw new AppError(PASSKEY_ERRORS.passkey_in_use);
  }

  // --- sign-in ---

  /** A discoverable-credential request: the authenticator offers whichever passkey it holds for us. */
  async beginLogin(origin: RequestOrigin) {
    const rp = this.#relyingParty(origin);
    const publicKey = await generateAuthenticationOptions({
      rpID: rp.id,
      userVerification: rp.userVerification,
      timeout: CEREMONY_MS,
    });
    await this.#remember(publicKey.challenge, { purpose: 'login' });
    return { options: { publicKey } };
  }

  /** The user the assertion proves to be; the route opens the session (as after a password). */
  async finishLogin(response: AuthenticationResponseJSON, origin: RequestOrigin): Promise<UserRow> {
    const rp = this.#relyingParty(origin);
    const challenge = await this.#claim(response, { purpose: 'login' });
    const stored = await findPasskeyByCredentialId(this.#db, response.id);
    if (!stored) throw new AppError(PASSKEY_ERRORS.passkey_unknown_credential);
    const handle = response.response.userHandle;
    if (handle && Buffer.from(handle, 'base64url').toString() !== String(stored.user_id)) {
      throw new AppError(PASSKEY_ERRORS.passkey_response_invalid, { reason: 'user handle' });
    }
    const user = await findLiveUserById(this.#db, stored.user_id);
    if (!user) throw new AppError(PASSKEY_ERRORS.passkey_unknown_credential);
    if (user.status !== USER_STATUS.enabled) throw new AppError(ACCOUNT_ERRORS.USER_BANNED);
    await this.#assert(stored, response, challenge, rp);
    return user;
  }

  // --- step-up verification ---

  async beginVerification(actor: PasskeyActor, origin: RequestOrigin) {
    const rp = this.#relyingParty(origin);
    const stored = await findPasskeyOfUser(this.#db, actor.user.id);
    if (!stored) throw new AppError(PASSKEY_ERRORS.passkey_not_registered);
    const publicKey = await generateAuthenticationOptions({
      rpID: rp.id,
      userVerification: rp.userVerification,
      timeout: CEREMONY_MS,
      allowCredentials: [{ id: stored.credential_id, transports: transportsOf(stored) }],
    });
    await this.#remember(publicKey.challenge, { purpose: 'verify', userId: actor.user.id, actor: actorKey(actor) });
    return { options: { publicKey } };
  }

  /** Checks the assertion; POST /api/verify with `method: "passkey"` then grants the step-up. */
  async finishVerification(
    actor: PasskeyActor,
    response: AuthenticationResponseJSON,
    origin: RequestOrigin,
  ): Promise<void> {
    const rp = this.#relyingParty(origin);
    const challenge = await this.#claim(response, { purpose: 'verify', userId: actor.user.id, actor: actorKey(actor) });
    const stored = await findPasskeyOfUser(this.#db, actor.user.id);
    if (!stored) throw new AppError(PASSKEY_ERRORS.passkey_not_registered);
    if (stored.credential_id !== response.id) throw new AppError(PASSKEY_ERRORS.passkey_unknown_credential);
    await this.#assert(stored, response, challenge, rp);
    await this.#kv.set(readyKey(actor), '1', VERIFIED_READY_MS);
  }

  /** Whether a step-up by passkey is open to the user (passkeys on, and they have one). */
  async canVerify(userId: number): Promise<boolean> {
    return this.enabled && (await userHasPasskey(this.#db, userId));
  }

  /** Uses up the actor's passed passkey verification; false when there is none. */
  async takeVerification(actor: PasskeyActor): Promise<boolean> {
    return (await this.#kv.take(readyKey(actor))) !== undefined;
  }

  // --- removal ---

  /** The user removes their passkey, unless nothing else would let them sign in again. */
  async remove(user: UserRow): Promise<void> {
    // The user row is locked as an unbind locks it: a passkey removal and an unbind racing for the last two
    // ways to sign in cannot both succeed.
    await this.#db.transaction().execute(async (trx) => {
      await trx.selectFrom('users').select('id').where('id', '=', user.id).forUpdate().execute();
      if (!(await userHasPasskey(trx, user.id))) return;
      if (!(await keepsAnotherWayToSignIn(trx, user.id, { kind: 'passkey' }))) {
        throw new AppError(PASSKEY_ERRORS.passkey_last_sign_in_method);
      }
      await deletePasskeyOfUser(trx, user.id);
    });
  }

  /** An administrator removes a lower-ranked user's passkey (a lost device). */
  async reset(actor: UserRow, userId: number): Promise<void> {
    const target = await findLiveUserById(this.#db, userId);
    if (!target) throw new AppError(ACCOUNT_ERRORS.USER_NOT_FOUND);
    assertOutranks(actor, target);
    if (!(await deletePasskeyOfUser(this.#db, userId))) throw new AppError(PASSKEY_ERRORS.passkey_not_registered);
  }

  // --- shared steps ---

  #relyingParty(origin: RequestOrigin): RelyingParty {
    if (!this.enabled) throw new AppError(PASSKEY_ERRORS.passkey_disabled);
    return relyingParty(this.#options, origin);
  }

  async #remember(challenge: string, pending: Pending): Promise<void> {
    await this.#kv.set(challengeKey(challenge), JSON.stringify(pending), CEREMONY_MS);
  }

  /** Takes the ceremony the response answers (once: a replayed response finds nothing) and checks it is ours. */
  async #claim(response: { response: { clientDataJSON: string } }, expected: Pending): Promise<string> {
    const challenge = challengeOf(response.response.clientDataJSON);
    const pending = challenge ? await this.#kv.take(challengeKey(challenge)) : undefined;
    if (!challenge || !pending) throw new AppError(PASSKEY_ERRORS.passkey_challenge_invalid);
    const found = JSON.parse(pending) as Pending;
    if (found.purpose !== expected.purpose || found.userId !== expected.userId || found.actor !== expected.actor) {
      throw new AppError(PASSKEY_ERRORS.passkey_challenge_invalid);
    }
    return challenge;
  }

  /** Verifies an assertion against the stored passkey and records its use; the counter may only go up. */
  async #assert(
    stored: StoredPasskey,
    response: AuthenticationResponseJSON,
    challenge: string,
    rp: RelyingParty,
  ): Promise<void> {
    const result = await verified(() =>
      verifyAuthenticationResponse({
        response,
        expectedChallenge: challenge,
        expectedOrigin: rp.origins,
        expectedRPID: rp.id,
        requireUserVerification: rp.userVerification === 'required',
        // Counter 0 here: the library then skips its own counter check, and ours below gives a stable code.
        credential: { id: stored.credential_id, publicKey: Buffer.from(stored.public_key, 'base64url'), counter: 0 },
      }),
    );
    if (!result.verified) throw new AppError(PASSKEY_ERRORS.passkey_response_invalid, { reason: 'signature' });
    const { newCounter, credentialBackedUp } = result.authenticationInfo;
    // Authenticators without a counter always send 0; any other must go up at every use.
    if ((newCounter > 0 || stored.sign_count > 0) && newCounter <= stored.sign_count) {
      throw new AppError(PASSKEY_ERRORS.passkey_counter_regressed);
    }
    if (!(await recordPasskeyUse(this.#db, stored.user_id, stored.sign_count, newCounter, credentialBackedUp, now()))) {
      throw new AppError(PASSKEY_ERRORS.passkey_counter_regressed);
    }
  }
}

function transportsOf(stored: StoredPasskey): string[] {
  const parsed: unknown = JSON.parse(stored.transports);
  return Array.isArray(parsed) ? parsed.filter((t): t is string => typeof t === 'string') : [];
}

/** The challenge inside a response's client data, or undefined when it is not readable. */
function challengeOf(clientDataJSON: string): string | undefined {
  try {
    const data: unknown = JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8'));
    const challenge = (data as { challenge?: unknown })?.challenge;
    return typeof challenge === 'string' && challenge !== '' ? challenge : undefined;
  } catch {
    return undefined;
  }
}

/** Runs a library check; its refusals (wrong origin, RP id, signature, flags) become one stable error. */
async function verified<T>(check: () => Promise<T>): Promise<T> {
  try {
    return await check();
  } catch (error) {
    if (error instanceof AppError) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new AppError(PASSKEY_ERRORS.passkey_response_invalid, { reason });
  }
}
