import { randomBytes } from 'node:crypto';
import type { KeyValueStore } from '../../../cluster/index.ts';
import { AppError } from '../../../errors.ts';
import { OAUTH_ERRORS } from './errors.ts';

/** How long a sign-in may take at the provider before its state expires. */
export const STATE_TTL_MS = 10 * 60_000;
const STATE_FORMAT = /^[A-Za-z0-9_-]{32}$/;
const key = (state: string) => `oauth:state:${state}`;

export interface IssuedState {
  /** The invitation code the visitor came with, applied if the sign-in creates an account. */
  aff: string;
}

/**
 * OAuth `state` values (RFC 6749 §10.12) in the cluster key-value store, so a state issued by one pod
 * is accepted by another, and only once.
 */
export class OAuthStates {
  readonly #kv: KeyValueStore;

  constructor(kv: KeyValueStore) {
    this.#kv = kv;
  }

  async issue(aff: string | undefined): Promise<string> {
    const state = randomBytes(24).toString('base64url');
    const issued: IssuedState = { aff: aff?.trim() ?? '' };
    await this.#kv.set(key(state), JSON.stringify(issued), STATE_TTL_MS);
    return state;
  }

  /**
   * Uses the state up. `browserState` is the state this browser was handed (kept in a cookie by the
   * HTTP layer): a state is only good in the browser that asked for it, so nobody can make a victim's
   * browser finish a sign-in (or a binding) that the attacker started.
   */
  async consume(state: string | undefined, browserState: string | undefined): Promise<IssuedState> {
    if (!state || !STATE_FORMAT.test(state) || state !== browserState) {
      throw new AppError(OAUTH_ERRORS.OAUTH_STATE_INVALID);
    }
    const raw = await this.#kv.take(key(state));
    if (raw === undefined) throw new AppError(OAUTH_ERRORS.OAUTH_STATE_INVALID);
    const parsed = JSON.parse(raw) as Partial<IssuedState>;
    return { aff: typeof parsed.aff === 'string' ? parsed.aff : '' };
  }
}
