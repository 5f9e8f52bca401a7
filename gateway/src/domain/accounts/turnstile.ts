import { AppError } from '../../errors.ts';
import type { OptionsService } from '../options/index.ts';
import { ACCOUNT_ERRORS } from './errors.ts';

/** Cloudflare Turnstile's server-side check, when the human check is switched on (TurnstileCheckEnabled). */
export class Turnstile {
  readonly #options: OptionsService;
  readonly #verifyUrl: string;

  constructor(options: OptionsService, verifyUrl: string) {
    this.#options = options;
    this.#verifyUrl = verifyUrl;
  }

  async check(token: string | undefined, ip: string): Promise<void> {
    if (!this.#options.getBoolean('TurnstileCheckEnabled')) return;
    if (!token) throw new AppError(ACCOUNT_ERRORS.TURNSTILE_REQUIRED);
    let success = false;
    try {
      const response = await fetch(this.#verifyUrl, {
        method: 'POST',
        body: new URLSearchParams({ secret: this.#options.get('TurnstileSecretKey'), response: token, remoteip: ip }),
        signal: AbortSignal.timeout(10_000),
      });
      success = response.ok && ((await response.json()) as { success?: unknown }).success === true;
    } catch {
      // Unreachable or garbled verifier: fail closed, the user can retry.
    }
    if (!success) throw new AppError(ACCOUNT_ERRORS.TURNSTILE_FAILED);
  }
}
