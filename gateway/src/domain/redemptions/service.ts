import type { Kysely, Updateable } from 'kysely';
import { AppError } from '../../errors.ts';
import type { Database, RedemptionsTable, UserRow } from '../../store/database.ts';
import { insertLog, LOG_TYPE } from '../../store/repositories/logs.ts';
import {
  claimRedemption,
  deleteInvalidRedemptions,
  deleteRedemption,
  findRedemption,
  findRedemptionByKey,
  insertRedemptions,
  REDEMPTION_SORT_FIELDS,
  REDEMPTION_STATUS,
  type RedemptionRow,
  searchRedemptions,
  updateRedemption,
} from '../../store/repositories/redemptions.ts';
import { addQuota } from '../../store/repositories/users.ts';
import { ACCOUNT_ERRORS } from '../accounts/errors.ts';
import { ROLE } from '../accounts/rules.ts';
import { assertFuture, parseExpiry } from '../expiry.ts';
import { checkListQuery, type ListQuery, type ListResult } from '../list-query.ts';
import type { OptionsService } from '../options/index.ts';
import { REDEMPTION_ERRORS } from './errors.ts';
import {
  checkCount,
  checkName,
  checkQuota,
  checkSettableStatus,
  DEFAULT_COUNT,
  DEFAULT_QUOTA,
  describeQuota,
  generateCode,
  NEVER,
} from './rules.ts';
import { type RedemptionView, redemptionView } from './view.ts';

export interface RedemptionCreate {
  name?: string | undefined;
  quota?: number | undefined;
  count?: number | undefined;
  /** Unix seconds, `yyyy-MM-dd HH:mm:ss`, or 0 for never. */
  expired_time?: number | string | undefined;
}

export interface RedemptionUpdate {
  id: number;
  name?: string | undefined;
  quota?: number | undefined;
  expired_time?: number | string | undefined;
  /** Enable or disable in the same write as the other fields (the console's edit form sends both). */
  status?: number | undefined;
}

export interface RedemptionFilters {
  /** An id, or part of the name. */
  keyword?: string | undefined;
  name?: string | undefined;
  status?: number | undefined;
  used_user_id?: number | undefined;
  id?: number | number[] | undefined;
}

type Admin = Pick<UserRow, 'id' | 'role'>;
type Redeemer = Pick<UserRow, 'id' | 'username'>;

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Redemption codes: administrators make and manage them, users redeem them into their wallet. */
export class RedemptionService {
  readonly #db: Kysely<Database>;
  readonly #options: OptionsService;

  static readonly SORTABLE = REDEMPTION_SORT_FIELDS;

  constructor(deps: { db: Kysely<Database>; options: OptionsService }) {
    this.#db = deps.db;
    this.#options = deps.options;
  }

  async list(query: ListQuery<RedemptionFilters>, actor: Admin): Promise<ListResult<RedemptionView>> {
    assertAdmin(actor);
    const { field, order, offset, limit } = checkListQuery(query, REDEMPTION_SORT_FIELDS, 'id');
    const filters = query.filters ?? {};
    const { items, total } = await searchRedemptions(this.#db, {
      keyword: filters.keyword,
      name: filters.name,
      status: filters.status,
      usedUserId: filters.used_user_id,
      ids: filters.id === undefined ? undefined : [filters.id].flat(),
      sort: { field, order },
      offset,
      limit,
    });
    return { items: items.map(redemptionView), total };
  }

  async get(id: number, actor: Admin): Promise<RedemptionView> {
    assertAdmin(actor);
    return redemptionView(await this.#find(id));
  }

  /** Generates `count` codes of `quota` each; answers the new records (their `key` is the code). */
  async create(input: RedemptionCreate, actor: Admin): Promise<RedemptionView[]> {
    assertAdmin(actor);
    const now = nowSeconds();
    const name = checkName(input.name);
    const count = checkCount(input.count ?? DEFAULT_COUNT);
    const quota = checkQuota(input.quota ?? DEFAULT_QUOTA, this.#quotaPerUnit());
    const expiredTime = input.expired_time === undefined ? NEVER : parseExpiry(input.expired_time, NEVER);
    assertFuture(expiredTime, NEVER, now);
    const rows = await insertRedemptions(
      this.#db,
      Array.from({ length: count }, () => ({
        user_id: actor.id,
        key: generateCode(),
        name,
        quota,
        created_time: now,
        expired_time: expiredTime,
      })),
    );
    return rows.map(redemptionView);
  }

  /** Name, quota and expiry of a code that is still unused (spec doc 2 §4). */
  async update(input: RedemptionUpdate, actor: Admin): Promise<RedemptionView> {
    assertAdmin(actor);
    const row = await this.#find(input.id);
    if (row.status !== REDEMPTION_STATUS.unused) throw new AppError(REDEMPTION_ERRORS.REDEMPTION_NOT_EDITABLE);
    const changes: Updateable<RedemptionsTable> = {};
    if (input.name !== undefined) changes.name = checkName(input.name);
    if (input.quota !== undefined) changes.quota = checkQuota(input.quota, this.#quotaPerUnit());
    if (input.expired_time !== undefined) {
      const expiredTime = parseExpiry(input.expired_time, NEVER);
      if (expiredTime !== row.expired_time) assertFuture(expiredTime, NEVER, nowSeconds());
      changes.expired_time = expiredTime;
    }
    if (input.status !== undefined && input.status !== row.status) changes.status = checkSettableStatus(input.status);
    if (Object.keys(changes).length === 0) return redemptionView(row);
    // Conditional on "still unused": a code redeemed since it was read is not rewritten.
    const updated = await updateRedemption(this.#db, row.id, changes, [REDEMPTION_STATUS.unused]);
    if (!updated) throw new AppError(REDEMPTION_ERRORS.REDEMPTION_NOT_EDITABLE);
    return redemptionView(updated);
  }

  /** Enable or disable; a used code keeps its status. */
  async setStatus(id: number, status: number, actor: Admin): Promise<RedemptionView> {
    assertAdmin(actor);
    const wanted = checkSettableStatus(status);
    const row = await this.#find(id);
    const updated =
      row.status === REDEMPTION_STATUS.used
        ? undefined
        : await updateRedemption(this.#db, row.id, { status: wanted }, [
            REDEMPTION_STATUS.unused,
            REDEMPTION_STATUS.disabled,
          ]);
    if (!updated) {
      throw new AppError(
        wanted === REDEMPTION_STATUS.unused
          ? REDEMPTION_ERRORS.REDEMPTION_USED_CANNOT_ENABLE
          : REDEMPTION_ERRORS.REDEMPTION_USED_CANNOT_DISABLE,
      );
    }
    return redemptionView(updated);
  }

  async delete(id: number, actor: Admin): Promise<void> {
    assertAdmin(actor);
    if (!(await deleteRedemption(this.#db, id, nowSeconds()))) {
      throw new AppError(REDEMPTION_ERRORS.REDEMPTION_NOT_FOUND);
    }
  }

  /** Deletes used, disabled and expired codes; answers how many. */
  deleteInvalid(actor: Admin): Promise<number> {
    assertAdmin(actor);
    return deleteInvalidRedemptions(this.#db, nowSeconds());
  }

  /**
   * Redeems a code into the user's wallet and answers the quota added. Claiming the code, adding the
   * quota and writing the top-up log are one transaction, and the claim is one conditional UPDATE, so
   * a code redeemed by many requests at once is used exactly once.
   */
  async redeem(key: string | undefined, user: Redeemer): Promise<number> {
    const code = key?.trim() ?? '';
    if (code === '') throw new AppError(REDEMPTION_ERRORS.REDEEM_KEY_REQUIRED);
    const now = nowSeconds();
    return this.#db.transaction().execute(async (trx) => {
      const claimed = await claimRedemption(trx, code, user.id, now);
      if (!claimed) throw whyNotRedeemable(await findRedemptionByKey(trx, code), now);
      await addQuota(trx, user.id, claimed.quota);
      const amount = describeQuota(
        claimed.quota,
        this.#options.getBoolean('DisplayInCurrencyEnabled'),
        this.#quotaPerUnit(),
      );
      await insertLog(trx, {
        user_id: user.id,
        username: user.username,
        created_at: now,
        type: LOG_TYPE.topup,
        quota: claimed.quota,
        content: `通过兑换码充值 ${amount}，兑换码ID ${claimed.id}`,
      });
      return claimed.quota;
    });
  }

  async #find(id: number): Promise<RedemptionRow> {
    const row = await findRedemption(this.#db, id);
    if (!row) throw new AppError(REDEMPTION_ERRORS.REDEMPTION_NOT_FOUND);
    return row;
  }

  #quotaPerUnit(): number {
    return this.#options.getNumber('QuotaPerUnit');
  }
}

/** Routes check the role too; this keeps the service safe when called from elsewhere (the /rest layer). */
function assertAdmin(actor: Admin): void {
  if (actor.role < ROLE.admin) throw new AppError(ACCOUNT_ERRORS.FORBIDDEN);
}

function whyNotRedeemable(row: RedemptionRow | undefined, now: number): AppError {
  if (!row || row.deleted_at !== null) return new AppError(REDEMPTION_ERRORS.REDEEM_KEY_INVALID);
  if (row.status === REDEMPTION_STATUS.used) return new AppError(REDEMPTION_ERRORS.REDEEM_KEY_USED);
  if (row.status === REDEMPTION_STATUS.disabled) return new AppError(REDEMPTION_ERRORS.REDEEM_KEY_DISABLED);
  if (row.expired_time !== NEVER && row.expired_time <= now) return new AppError(REDEMPTION_ERRORS.REDEEM_KEY_EXPIRED);
  return new AppError(REDEMPTION_ERRORS.REDEEM_KEY_INVALID);
}
