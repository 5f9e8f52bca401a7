import { randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import type { ClusterState } from '../../cluster/index.ts';
import { AppError, defineErrors } from '../../errors.ts';

export const VERIFICATION_ERRORS = defineErrors({
  VERIFICATION_RESEND_TOO_SOON: {
    status: 429,
    message: { zh: '发送过于频繁，请 {seconds} 秒后再试', en: 'Sent too recently, please retry in {seconds} seconds' },
  },
});

export type VerificationPurpose = 'register' | 'bind' | 'reset';

/** Spec doc 1 §9: a code can be sent again after 30 seconds. */
export const RESEND_LOCK_MS = 30_000;
export const CODE_TTL_MS = 10 * 60_000;
/** Wrong guesses before a code is thrown away, so six digits cannot be brute-forced. */
const MAX_FAILED_ATTEMPTS = 5;

/**
 * One-time codes sent to an email address, kept in the cluster key-value store so that the pod that
 * sends a code and the pod that checks it need not be the same.
 */
export class VerificationCodes {
  readonly #cluster: ClusterState;

  constructor(cluster: ClusterState) {
    this.#cluster = cluster;
  }

  /** A new code (six digits, or a long token for links) for `email`, refused within the resend lock. */
  async issue(purpose: VerificationPurpose, email: string, form: 'digits' | 'token' = 'digits'): Promise<string> {
    const address = normalize(email);
    const lock = `verify-lock:${purpose}:${address}`;
    if (!(await this.#cluster.kv.setIfAbsent(lock, '1', RESEND_LOCK_MS))) {
      const left = (await this.#cluster.kv.ttl(lock)) ?? RESEND_LOCK_MS;
      throw new AppError(VERIFICATION_ERRORS.VERIFICATION_RESEND_TOO_SOON, { seconds: Math.ceil(left / 1000) });
    }
    const code =
      form === 'digits' ? String(randomInt(0, 1_000_000)).padStart(6, '0') : randomBytes(24).toString('base64url');
    await this.#cluster.kv.set(codeKey(purpose, address), code, CODE_TTL_MS);
    return code;
  }

  /** Takes back an issued code and its resend lock, e.g. when the mail carrying it could not be sent. */
  async withdraw(purpose: VerificationPurpose, email: string): Promise<void> {
    const address = normalize(email);
    await this.#cluster.kv.delete(codeKey(purpose, address));
    await this.#cluster.kv.delete(`verify-lock:${purpose}:${address}`);
  }

  /** True once for the right code; the code is used up, and too many wrong guesses discard it. */
  async consume(purpose: VerificationPurpose, email: string, code: string): Promise<boolean> {
    const address = normalize(email);
    const key = codeKey(purpose, address);
    const stored = await this.#cluster.kv.get(key);
    if (stored === undefined) return false;
    if (!sameText(stored, code.trim())) {
      const failures = await this.#cluster.counters.add(`verify-fail:${purpose}:${address}`, CODE_TTL_MS);
      if (failures >= MAX_FAILED_ATTEMPTS) await this.#cluster.kv.delete(key);
      return false;
    }
    // take() is atomic: of two pods checking the same right code at once, only one succeeds.
    return (await this.#cluster.kv.take(key)) === stored;
  }
}

const normalize = (email: string) => email.trim().toLowerCase();
const codeKey = (purpose: VerificationPurpose, address: string) => `verify:${purpose}:${address}`;

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
