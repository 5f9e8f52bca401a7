import type { Kysely, Updateable } from 'kysely';
import type { Bus } from '../../cluster/index.ts';
import { AppError } from '../../errors.ts';
import type { Database, TokensTable, UserRow } from '../../store/database.ts';
import { withLeasedQuota } from '../../store/repositories/quota-leases.ts';
import {
  countUserTokens,
  deleteUserTokens,
  findTokenByKeyHmac,
  findUserToken,
  findUserTokens,
  insertTokens,
  searchUserTokens,
  TOKEN_SORT_FIELDS,
  TOKEN_STATUS,
  type TokenRow,
  updateUserToken,
} from '../../store/repositories/tokens.ts';
import { announceAuthChange } from '../auth-changes.ts';
import { assertFuture, parseExpiry } from '../expiry.ts';
import { usableGroups } from '../groups.ts';
import type { Keyring } from '../keyring.ts';
import type { PeriodBudget, PeriodUsageViews } from '../ledger/periods/budget.ts';
import {
  applyPeriodLimitFields,
  type PeriodLimitFields,
  parsePeriodLimits,
  serializePeriodLimits,
} from '../ledger/periods/limits.ts';
import { checkListQuery, type ListQuery, type ListResult } from '../list-query.ts';
import { assertUnmanaged } from '../managed.ts';
import type { OptionsService } from '../options/index.ts';
import { rateLimitsToStore } from '../rate-limits.ts';
import { TOKEN_ERRORS } from './errors.ts';
import { bareKey, generateKey, randomAlphanumeric } from './keys.ts';
import {
  AUTO_GROUP,
  assertMayEnable,
  checkCount,
  checkName,
  checkRemainQuota,
  checkSettableStatus,
  DEFAULT_REMAIN_QUOTA,
  effectiveTokenStatus,
  NAME_MAX,
  normalizeAllowIps,
  normalizeModelLimits,
  SUFFIX_LENGTH,
} from './rules.ts';
import { createdTokenView, revealKey, type TokenView, tokenView } from './view.ts';

/** The fields a user sets on a token; absent fields keep their value (update) or default (create). */
export interface TokenInput extends Partial<PeriodLimitFields> {
  name?: string | undefined;
  remain_quota?: number | undefined;
  unlimited_quota?: boolean | undefined;
  /** Unix seconds, `yyyy-MM-dd HH:mm:ss`, or -1 for never. */
  expired_time?: number | string | undefined;
  model_limits_enabled?: boolean | undefined;
  model_limits?: string | undefined;
  allow_ips?: string | undefined;
  group?: string | undefined;
  cross_group_retry?: boolean | undefined;
  /** Requests and tokens per minute (domain/rate-limits.ts); `{}` for none. */
  rate_limits?: unknown;
}

export interface TokenCreate extends TokenInput {
  /** How many tokens to create at once (1-100); more than one get a random name suffix. */
  count?: number | undefined;
}

export interface TokenUpdate extends TokenInput {
  id: number;
  /** Enable or disable in the same write as the other fields (the console's edit form sends both). */
  status?: number | undefined;
}

export interface TokenFilters {
  /** Part of the name. */
  keyword?: string | undefined;
  name?: string | undefined;
  /** A full key, with or without `sk-`: matched by its HMAC, never by scanning. */
  token?: string | undefined;
  /** The status the token shows (1-4). */
  status?: number | undefined;
  group?: string | undefined;
  id?: number | number[] | undefined;
}

/** Who is acting: tokens are always the actor's own. */
export type TokenActor = Pick<UserRow, 'id' | 'group'>;

/** The custom resource kind that declares managed tokens (DESIGN.md §5). */
const MANAGED_KIND = 'AccessToken';
const nowSeconds = () => Math.floor(Date.now() / 1000);

/** A token as `/api` shows it: with its current periods' use and what is left (only periods with a limit). */
export type TokenWithUsage = TokenView & { period_usage: PeriodUsageViews };

/** A user's API tokens (spec doc 2 §2-§5 "Tokens"): every rule lives here, the routes only shape. */
export class TokenService {
  readonly #db: Kysely<Database>;
  readonly #options: OptionsService;
  readonly #keyring: Keyring;
  readonly #bus: Bus | undefined;
  readonly #periods: PeriodBudget | undefined;

  constructor(deps: {
    db: Kysely<Database>;
    options: OptionsService;
    keyring: Keyring;
    bus?: Bus | undefined;
    periods?: PeriodBudget | undefined;
  }) {
    this.#db = deps.db;
    this.#options = deps.options;
    this.#keyring = deps.keyring;
    this.#bus = deps.bus;
    this.#periods = deps.periods;
  }

  static readonly SORTABLE = TOKEN_SORT_FIELDS;

  async list(query: ListQuery<TokenFilters>, actor: TokenActor): Promise<ListResult<TokenWithUsage>> {
    const { field, order, offset, limit } = checkListQuery(query, TOKEN_SORT_FIELDS, 'id');
    const filters = query.filters ?? {};
    const now = nowSeconds();
    const token = filters.token?.trim();
    const { items, total } = await searchUserTokens(this.#db, {
      userId: actor.id,
      keyword: filters.keyword?.trim() || undefined,
      name: filters.name,
      keyHmac: token ? this.#keyring.hmac(bareKey(token)) : undefined,
      status: filters.status,
      group: filters.group,
      ids: filters.id === undefined ? undefined : [filters.id].flat(),
      sort: { field, order },
      offset,
      limit,
      now,
    });
    return { items: await this.#withUsage(items, now), total };
  }

  async get(id: number, actor: TokenActor): Promise<TokenWithUsage> {
    const [view] = await this.#withUsage([await this.#own(id, actor)], nowSeconds());
    return view!;
  }

  /** The view of one token, its remaining quota as shown (withLeasedQuota). */
  async #shown(stored: TokenRow, now: number): Promise<TokenView> {
    const [row] = await withLeasedQuota(this.#db, 'token', [stored]);
    return tokenView(row!, this.#keyring, now);
  }

  /** The views with their current periods' use and what is left (one query for the page). */
  async #withUsage(stored: TokenRow[], now: number): Promise<TokenWithUsage[]> {
    // What is left as shown: leased quota added back (withLeasedQuota).
    const rows = await withLeasedQuota(this.#db, 'token', stored);
    const holders = rows.map((row) => ({ id: row.id, limits: parsePeriodLimits(row.period_limits) }));
    const usage = (await this.#periods?.current('token', holders)) ?? new Map<number, PeriodUsageViews>();
    return rows.map((row) => ({ ...tokenView(row, this.#keyring, now), period_usage: usage.get(row.id) ?? {} }));
  }

  /** The owner's full key, without `sk-` (clients add it, as new-api's do). */
  async revealKey(id: number, actor: TokenActor): Promise<string> {
    return revealKey(await this.#own(id, actor), this.#keyring);
  }

  /** Several of the owner's full keys by token id; ids that are not the owner's are left out. */
  async revealKeys(ids: readonly number[], actor: TokenActor): Promise<Record<number, string>> {
    const rows = await findUserTokens(this.#db, actor.id, [...new Set(ids)]);
    return Object.fromEntries(rows.map((row) => [row.id, revealKey(row, this.#keyring)]));
  }

  /** The live token a key (as pasted: `sk-` and a channel pin allowed) belongs to, by HMAC. */
  findByKey(key: string): Promise<TokenRow | undefined> {
    const bare = bareKey(key);
    return bare ? findTokenByKeyHmac(this.#db, this.#keyring.hmac(bare)) : Promise.resolve(undefined);
  }

  /** Creates one token, or `count` tokens named `<name>-<6 random letters/digits>`. */
  async create(input: TokenCreate, actor: TokenActor): Promise<TokenView[]> {
    const now = nowSeconds();
    const count = input.count === undefined ? 1 : checkCount(input.count);
    const batch = count > 1;
    const name = checkName(input.name, batch ? NAME_MAX - SUFFIX_LENGTH - 1 : NAME_MAX);
    const unlimited = input.unlimited_quota ?? false;
    const remainQuota = checkRemainQuota(input.remain_quota ?? DEFAULT_REMAIN_QUOTA, unlimited, this.#quotaPerUnit());
    const expiredTime = input.expired_time === undefined ? -1 : parseExpiry(input.expired_time, -1);
    assertFuture(expiredTime, -1, now);
    // A client that names no group gets the auto group when DefaultUseAutoGroup is on (reference §3.2).
    const group = this.#checkGroup(input.group ?? this.#defaultGroup(), actor);
    const fields = {
      user_id: actor.id,
      status: TOKEN_STATUS.enabled,
      created_time: now,
      expired_time: expiredTime,
      remain_quota: remainQuota,
      unlimited_quota: unlimited,
      model_limits_enabled: input.model_limits_enabled ?? false,
      model_limits: normalizeModelLimits(input.model_limits ?? ''),
      allow_ips: normalizeAllowIps(input.allow_ips ?? ''),
      group,
      cross_group_retry: group === AUTO_GROUP && (input.cross_group_retry ?? false),
      period_limits: serializePeriodLimits(applyPeriodLimitFields({}, input) ?? {}),
      rate_limits: rateLimitsToStore(input.rate_limits),
    };
    const rows = Array.from({ length: count }, () => {
      const key = generateKey();
      return {
        ...fields,
        name: batch ? `${name}-${randomAlphanumeric(SUFFIX_LENGTH)}` : name,
        key_hmac: this.#keyring.hmac(key),
        key_encrypted: this.#keyring.encrypt(key),
      };
    });
    const max = this.#options.getNumber('token_setting.max_user_tokens');
    const created = await this.#db.transaction().execute(async (trx) => {
      // The user row lock makes concurrent creations count one after another, so none slips past the limit.
      await trx.selectFrom('users').select('id').where('id', '=', actor.id).forUpdate().execute();
      if ((await countUserTokens(trx, actor.id)) + count > max) {
        throw new AppError(TOKEN_ERRORS.TOKEN_LIMIT_REACHED, { max });
      }
      return insertTokens(trx, rows);
    });
    return created.map((row) => createdTokenView(row, this.#keyring, now));
  }

  /** Changes the given fields; unchanged values are not re-checked (an old expiry may stay as it is). */
  async update(input: TokenUpdate, actor: TokenActor): Promise<TokenView> {
    const row = await this.#own(input.id, actor);
    const now = nowSeconds();
    const changes: Updateable<TokensTable> = {};
    if (input.name !== undefined) {
      const name = checkName(input.name);
      if (name !== row.name) changes.name = name;
    }
    const unlimited = input.unlimited_quota ?? row.unlimited_quota;
    if (unlimited !== row.unlimited_quota) changes.unlimited_quota = unlimited;
    if (input.remain_quota !== undefined || changes.unlimited_quota !== undefined) {
      const remain = checkRemainQuota(input.remain_quota ?? row.remain_quota, unlimited, this.#quotaPerUnit());
      if (remain !== row.remain_quota) changes.remain_quota = remain;
    }
    if (input.expired_time !== undefined) {
      const expiredTime = parseExpiry(input.expired_time, -1);
      if (expiredTime !== row.expired_time) {
        assertFuture(expiredTime, -1, now);
        changes.expired_time = expiredTime;
      }
    }
    if (input.model_limits_enabled !== undefined && input.model_limits_enabled !== row.model_limits_enabled) {
      changes.model_limits_enabled = input.model_limits_enabled;
    }
    if (input.model_limits !== undefined) {
      const limits = normalizeModelLimits(input.model_limits);
      if (limits !== row.model_limits) changes.model_limits = limits;
    }
    if (input.allow_ips !== undefined) {
      const ips = normalizeAllowIps(input.allow_ips);
      if (ips !== row.allow_ips) changes.allow_ips = ips;
    }
    if (input.group !== undefined && input.group.trim() !== row.group) {
      changes.group = this.#checkGroup(input.group, actor);
    }
    if (input.rate_limits !== undefined) {
      const limits = rateLimitsToStore(input.rate_limits);
      if (limits !== row.rate_limits) changes.rate_limits = limits;
    }
    const group = changes.group ?? row.group;
    const crossGroupRetry = group === AUTO_GROUP && (input.cross_group_retry ?? row.cross_group_retry);
    if (crossGroupRetry !== row.cross_group_retry) changes.cross_group_retry = crossGroupRetry;
    const periodLimits = applyPeriodLimitFields(parsePeriodLimits(row.period_limits), input);
    if (periodLimits && serializePeriodLimits(periodLimits) !== row.period_limits) {
      changes.period_limits = serializePeriodLimits(periodLimits);
    }

    if (input.status !== undefined) {
      const wanted = checkSettableStatus(input.status);
      // Checked against the token as edited: a new expiry or quota may be what lets it be enabled. A token
      // stored enabled but shown expired or exhausted is being enabled too (setStatus checks it the same way).
      const shown = effectiveTokenStatus(row, now);
      if (wanted === TOKEN_STATUS.enabled && shown !== wanted) assertMayEnable({ ...row, ...changes }, now);
      if (wanted !== row.status) changes.status = wanted;
    }

    assertUnmanaged(row, MANAGED_KIND, Object.keys(changes));
    if (Object.keys(changes).length === 0) return this.#shown(row, now);
    // One statement: every field, the status included, is written or none is.
    const updated = await updateUserToken(this.#db, actor.id, row.id, changes);
    if (!updated) throw new AppError(TOKEN_ERRORS.TOKEN_NOT_FOUND);
    await announceAuthChange(this.#bus, { tokens: [row.id] });
    return this.#shown(updated, now);
  }

  /** Enable or disable; an expired or exhausted token stays as it is until its expiry or quota is fixed. */
  async setStatus(id: number, status: number, actor: TokenActor): Promise<TokenView> {
    const wanted = checkSettableStatus(status);
    const row = await this.#own(id, actor);
    const now = nowSeconds();
    if (wanted === TOKEN_STATUS.enabled) assertMayEnable(row, now);
    assertUnmanaged(row, MANAGED_KIND, row.status === wanted ? [] : ['status']);
    if (row.status === wanted) return this.#shown(row, now);
    const updated = await updateUserToken(this.#db, actor.id, row.id, { status: wanted });
    if (!updated) throw new AppError(TOKEN_ERRORS.TOKEN_NOT_FOUND);
    await announceAuthChange(this.#bus, { tokens: [row.id] });
    return this.#shown(updated, now);
  }

  async delete(id: number, actor: TokenActor): Promise<void> {
    const row = await this.#own(id, actor);
    assertUnmanaged(row, MANAGED_KIND, ['delete']);
    if ((await deleteUserTokens(this.#db, actor.id, [row.id], nowSeconds())) === 0) {
      throw new AppError(TOKEN_ERRORS.TOKEN_NOT_FOUND);
    }
    await announceAuthChange(this.#bus, { tokens: [row.id] });
  }

  /**
   * Deletes the actor's tokens among `ids` (other users' ids are ignored) and answers how many. A
   * managed token among them refuses the whole batch, so nothing is half done.
   */
  async deleteMany(ids: readonly number[], actor: TokenActor): Promise<number> {
    const unique = [...new Set(ids)];
    for (const row of await findUserTokens(this.#db, actor.id, unique)) assertUnmanaged(row, MANAGED_KIND, ['delete']);
    const deleted = await deleteUserTokens(this.#db, actor.id, unique, nowSeconds());
    await announceAuthChange(this.#bus, { tokens: unique });
    return deleted;
  }

  async #own(id: number, actor: TokenActor): Promise<TokenRow> {
    const row = await findUserToken(this.#db, actor.id, id);
    if (!row) throw new AppError(TOKEN_ERRORS.TOKEN_NOT_FOUND);
    return row;
  }

  /** Empty (the user's own group), `auto`, or one of the groups the user may use (reference §3.2). */
  #checkGroup(group: string, actor: TokenActor): string {
    const name = group.trim();
    if (name === '' || name === AUTO_GROUP) return name;
    if (!Object.hasOwn(usableGroups(this.#options, actor.group), name)) {
      throw new AppError(TOKEN_ERRORS.TOKEN_GROUP_UNUSABLE, { group: name });
    }
    return name;
  }

  #defaultGroup(): string {
    return this.#options.getBoolean('DefaultUseAutoGroup') ? AUTO_GROUP : '';
  }

  #quotaPerUnit(): number {
    return this.#options.getNumber('QuotaPerUnit');
  }
}
