import { BlockList, isIP } from 'node:net';
import type { Kysely } from 'kysely';
import type { Bus } from '../../cluster/index.ts';
import { readSetting } from '../../domain/accounts/settings.ts';
import { AUTH_CHANGES_CHANNEL, type AuthChange } from '../../domain/auth-changes.ts';
import type { Keyring } from '../../domain/keyring.ts';
import { type PeriodLimits, parsePeriodLimits } from '../../domain/ledger/periods/limits.ts';
import { type RateLimits, readRateLimits } from '../../domain/rate-limits.ts';
import type { Database, UserRow } from '../../store/database.ts';
import { isStoreUnavailable } from '../../store/unavailable.ts';

/** A token and its owner as the relay checks them, without any database access per request. */
export interface KeyIdentity {
  token: {
    id: number;
    name: string;
    status: number;
    /** Unix seconds, -1 never. */
    expiredTime: number;
    unlimited: boolean;
    /** null: any model. */
    modelLimits: ReadonlySet<string> | null;
    /** null: any client address. */
    allowIps: BlockList | null;
    group: string;
    /** Group `auto` only: a failing auto group hands the retry to the next one. */
    crossGroupRetry: boolean;
    /** Daily, weekly and monthly limits ({} for none). */
    periodLimits: PeriodLimits;
    rateLimits: RateLimits;
  };
  user: {
    id: number;
    username: string;
    group: string;
    role: number;
    status: number;
    email: string;
    acceptUnsetModels: boolean;
    /** The user's own low-quota alert threshold; undefined: the QuotaRemindThreshold option. */
    quotaWarningThreshold?: number;
    /** Daily, weekly and monthly limits ({} for none). */
    periodLimits: PeriodLimits;
    rateLimits: RateLimits;
  };
}

type UserColumns = Pick<
  UserRow,
  'id' | 'username' | 'group' | 'role' | 'status' | 'email' | 'setting' | 'period_limits' | 'rate_limits'
>;

/** A user as the relay checks and bills them. */
export function relayUser(row: UserColumns, keyring: Keyring): KeyIdentity['user'] {
  const setting = readSetting(row.setting, keyring);
  return {
    id: row.id,
    username: row.username,
    group: row.group,
    role: row.role,
    status: row.status,
    email: row.email,
    acceptUnsetModels: setting.accept_unset_model_ratio_model,
    periodLimits: parsePeriodLimits(row.period_limits),
    rateLimits: readRateLimits(row.rate_limits),
    // A user who never saved their settings has no threshold of their own.
    ...(row.setting ? { quotaWarningThreshold: setting.quota_warning_threshold } : {}),
  };
}

interface Entry {
  identity: KeyIdentity | null;
  expiresAt: number;
}

/** Unknown keys are remembered briefly, so a flood of bad keys does not become a flood of queries. */
const NEGATIVE_TTL_MS = 10_000;

/**
 * API keys, kept in memory (DESIGN.md §3 step 2). A key is read from the database (by its HMAC) once,
 * then served from memory until a change to its token or owner is announced on the bus (every pod drops
 * it within a second) or its time-to-live passes (the safety net for a missed message); while the database
 * is unreachable, a key whose time-to-live passed is still served as last read. Entries are keyed
 * by the key as presented, so a request served from memory costs a map lookup, not an HMAC.
 */
export class KeyCache {
  readonly #db: Kysely<Database>;
  readonly #keyring: Keyring;
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #entries = new Map<string, Entry>();
  readonly #loading = new Map<string, Promise<KeyIdentity | null>>();
  #unsubscribe: (() => Promise<void>) | undefined;

  private constructor(deps: { db: Kysely<Database>; keyring: Keyring; ttlMs: number; maxEntries: number }) {
    this.#db = deps.db;
    this.#keyring = deps.keyring;
    this.#ttlMs = deps.ttlMs;
    this.#maxEntries = deps.maxEntries;
  }

  static async start(deps: { db: Kysely<Database>; keyring: Keyring; bus: Bus; ttlMs?: number; maxEntries?: number }) {
    const cache = new KeyCache({ ...deps, ttlMs: deps.ttlMs ?? 60_000, maxEntries: deps.maxEntries ?? 100_000 });
    cache.#unsubscribe = await deps.bus.subscribe(AUTH_CHANGES_CHANNEL, (message) => cache.#onChange(message));
    return cache;
  }

  /** The identity in memory for a bare key: null when the key is known not to exist, undefined when it must be read. */
  cached(key: string): KeyIdentity | null | undefined {
    const entry = this.#entries.get(key);
    return entry && entry.expiresAt > Date.now() ? entry.identity : undefined;
  }

  /** The identity behind a bare key (no `sk-`, no channel pin), or undefined if there is none. */
  async lookup(key: string): Promise<KeyIdentity | undefined> {
    const cached = this.cached(key);
    if (cached !== undefined) return cached ?? undefined;
    const now = Date.now();
    let loading = this.#loading.get(key);
    if (!loading) {
      loading = this.#load(this.#keyring.hmac(key)).finally(() => this.#loading.delete(key));
      this.#loading.set(key, loading);
    }
    let identity: KeyIdentity | null;
    try {
      identity = await loading;
    } catch (error) {
      // The database is unreachable: a key this pod knew keeps working on what it last read (issue 18).
      const stale = this.#entries.get(key)?.identity;
      if (stale && isStoreUnavailable(error)) return stale;
      throw error;
    }
    if (this.#entries.size >= this.#maxEntries) this.#entries.clear();
    this.#entries.set(key, { identity, expiresAt: now + (identity ? this.#ttlMs : NEGATIVE_TTL_MS) });
    return identity ?? undefined;
  }

  async close(): Promise<void> {
    await this.#unsubscribe?.();
    this.#entries.clear();
  }

  async #load(hmac: string): Promise<KeyIdentity | null> {
    const row = await this.#db
      .selectFrom('tokens')
      .innerJoin('users', 'users.id', 'tokens.user_id')
      .select([
        'tokens.id as token_id',
        'tokens.name',
        'tokens.status as token_status',
        'tokens.expired_time',
        'tokens.unlimited_quota',
        'tokens.model_limits_enabled',
        'tokens.model_limits',
        'tokens.allow_ips',
        'tokens.group as token_group',
        'tokens.cross_group_retry',
        'tokens.period_limits as token_period_limits',
        'tokens.rate_limits as token_rate_limits',
        'users.id as user_id',
        'users.username',
        'users.group as user_group',
        'users.role',
        'users.status as user_status',
        'users.email',
        'users.setting',
        'users.period_limits',
        'users.rate_limits',
      ])
      .where('tokens.key_hmac', '=', hmac)
      .where('tokens.deleted_at', 'is', null)
      .where('users.deleted_at', 'is', null)
      .executeTakeFirst();
    if (!row) return null;
    return {
      token: {
        id: row.token_id,
        name: row.name,
        status: row.token_status,
        expiredTime: row.expired_time,
        unlimited: row.unlimited_quota,
        modelLimits: row.model_limits_enabled ? new Set(splitList(row.model_limits, ',')) : null,
        allowIps: allowList(row.allow_ips),
        group: row.token_group,
        crossGroupRetry: row.cross_group_retry,
        periodLimits: parsePeriodLimits(row.token_period_limits),
        rateLimits: readRateLimits(row.token_rate_limits),
      },
      user: relayUser(
        {
          id: row.user_id,
          username: row.username,
          group: row.user_group,
          role: row.role,
          status: row.user_status,
          email: row.email,
          setting: row.setting,
          period_limits: row.period_limits,
          rate_limits: row.rate_limits,
        },
        this.#keyring,
      ),
    };
  }

  #onChange(message: string): void {
    let change: AuthChange;
    try {
      change = JSON.parse(message) as AuthChange;
    } catch {
      return;
    }
    const tokens = new Set(change.tokens ?? []);
    const users = new Set(change.users ?? []);
    for (const [key, entry] of this.#entries) {
      const identity = entry.identity;
      // Unknown keys may have just been created: forget those too.
      if (!identity || tokens.has(identity.token.id) || users.has(identity.user.id)) this.#entries.delete(key);
    }
  }
}

const splitList = (text: string, separator: string | RegExp) =>
  text
    .split(separator)
    .map((part) => part.trim())
    .filter(Boolean);

/** The token's IP allow list (IPs or CIDRs, one per line); null when empty. */
function allowList(text: string): BlockList | null {
  const entries = splitList(text, /[\n,]/);
  if (entries.length === 0) return null;
  const list = new BlockList();
  for (const entry of entries) {
    const [address, prefix] = entry.split('/');
    const family = isIP(address ?? '') === 6 ? 'ipv6' : 'ipv4';
    if (!address || isIP(address) === 0) continue;
    if (prefix === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(prefix), family);
  }
  return list;
}
