import type { Kysely } from 'kysely';
import type { Bus } from '../../cluster/index.ts';
import { AppError } from '../../errors.ts';
import type { Database, UserRow, UserUpdate } from '../../store/database.ts';
import { hasManageLogWithKey, insertLog, LOG_TYPE } from '../../store/repositories/logs.ts';
import { deletePasskeyOfUser } from '../../store/repositories/passkeys.ts';
import { withLeasedQuota } from '../../store/repositories/quota-leases.ts';
import {
  addQuota,
  findLiveUserBy,
  findUserById,
  searchUsers,
  setSpendableQuota,
  spendableQuota,
  type UserSearch,
  updateUser,
} from '../../store/repositories/users.ts';
import { announceAuthChange } from '../auth-changes.ts';
import {
  applyPeriodLimitFields,
  type PeriodLimitFields,
  parsePeriodLimits,
  serializePeriodLimits,
} from '../ledger/periods/limits.ts';
import { rateLimitsToStore } from '../rate-limits.ts';
import { ACCOUNT_ERRORS } from './errors.ts';
import { hashPassword } from './password.ts';
import { assertMayCreateRole, assertMayManage, assertOutranks, type ManageAction } from './permissions.ts';
import type { RegistrationService } from './registration.ts';
import { checkDisplayName, checkPassword, checkUsername, ROLE, USER_STATUS } from './rules.ts';
import type { SessionService } from './sessions.ts';

export interface AdminUserUpdate extends Partial<PeriodLimitFields> {
  id: number;
  username?: string | undefined;
  display_name?: string | undefined;
  password?: string | undefined;
  group?: string | undefined;
  quota?: number | undefined;
  remark?: string | undefined;
  /** Requests and tokens per minute (domain/rate-limits.ts); `{}` for none. */
  rate_limits?: unknown;
  /** Role and status changes (the console's edit form), under the manage rules, in the same transaction. */
  manage?: ManageAction[] | undefined;
}

export interface AdminUserCreate {
  username?: string | undefined;
  display_name?: string | undefined;
  password?: string | undefined;
  role?: number | undefined;
}

type Actor = Pick<UserRow, 'id' | 'role' | 'username'>;

/** new-api's quota adjustment (`POST /api/user/manage`, action `add_quota`): add, take, or set the balance. */
export const QUOTA_MODES = ['add', 'subtract', 'override'] as const;
export type QuotaMode = (typeof QUOTA_MODES)[number];

const now = () => Math.floor(Date.now() / 1000);

/** A management log (type 3) of a quota change; `other.admin_info` names who did it, as new-api's log view reads. */
const quotaLog = (user: Pick<UserRow, 'id' | 'username'>, actor: Actor, content: string, idempotencyKey?: string) => ({
  user_id: user.id,
  username: user.username,
  created_at: now(),
  type: LOG_TYPE.manage,
  content,
  other: JSON.stringify({
    admin_info: { admin_id: actor.id, admin_username: actor.username },
    ...(idempotencyKey ? { idempotency_key: idempotencyKey } : {}),
  }),
});

/** The columns a manage action sets. */
function manageChanges(action: ManageAction): UserUpdate {
  switch (action) {
    case 'promote':
      return { role: ROLE.admin };
    case 'demote':
      return { role: ROLE.user };
    case 'disable':
      return { status: USER_STATUS.disabled };
    case 'enable':
      return { status: USER_STATUS.enabled };
    case 'delete':
      return { deleted_at: now(), access_token_hmac: null };
  }
}

/** User management for administrators (spec doc 1 §4, §6): every rule is checked here, not in routes. */
export class UserAdminService {
  readonly #db: Kysely<Database>;
  readonly #sessions: SessionService;
  readonly #registration: RegistrationService;
  readonly #bus: Bus | undefined;

  constructor(deps: {
    db: Kysely<Database>;
    sessions: SessionService;
    registration: RegistrationService;
    bus?: Bus | undefined;
  }) {
    this.#db = deps.db;
    this.#sessions = deps.sessions;
    this.#registration = deps.registration;
    this.#bus = deps.bus;
  }

  /** Users with their quota as shown (leased quota added back: withLeasedQuota). */
  async search(search: UserSearch): Promise<{ items: UserRow[]; total: number }> {
    const { items, total } = await searchUsers(this.#db, search);
    return { items: await withLeasedQuota(this.#db, 'user', items), total };
  }

  async get(actor: Actor, id: number): Promise<UserRow> {
    const user = await this.#target(id);
    assertOutranks(actor, user);
    return (await withLeasedQuota(this.#db, 'user', [user]))[0]!;
  }

  async create(actor: Actor, input: AdminUserCreate): Promise<UserRow> {
    if (!input.username?.trim() || !input.password) throw new AppError(ACCOUNT_ERRORS.USERNAME_AND_PASSWORD_REQUIRED);
    const username = checkUsername(input.username);
    const password = checkPassword(input.password);
    const role = input.role ?? ROLE.user;
    assertMayCreateRole(actor, role);
    // The role is written with the account (one transaction): no common user is left behind if it fails.
    return this.#registration.createAccount({
      username,
      passwordHash: await hashPassword(password),
      displayName: checkDisplayName(input.display_name ?? '', username),
      role,
    });
  }

  async update(actor: Actor, input: AdminUserUpdate): Promise<UserRow> {
    const user = await this.#target(input.id);
    assertOutranks(actor, user);
    const changes: UserUpdate = {};
    if (input.username !== undefined) {
      const username = checkUsername(input.username);
      if (username !== user.username) {
        const holder = await findLiveUserBy(this.#db, 'username', username);
        if (holder && holder.id !== user.id) throw new AppError(ACCOUNT_ERRORS.USERNAME_TAKEN);
        changes.username = username;
      }
    }
    if (input.display_name !== undefined) changes.display_name = checkDisplayName(input.display_name, user.username);
    if (input.group !== undefined && input.group.trim() !== '') changes.group = input.group.trim();
    if (input.remark !== undefined) changes.remark = input.remark;
    const periodLimits = applyPeriodLimitFields(parsePeriodLimits(user.period_limits), input);
    if (periodLimits && serializePeriodLimits(periodLimits) !== user.period_limits) {
      changes.period_limits = serializePeriodLimits(periodLimits);
    }
    if (input.rate_limits !== undefined) changes.rate_limits = rateLimitsToStore(input.rate_limits);
    if (input.quota !== undefined) {
      if (!Number.isSafeInteger(input.quota)) throw new AppError(ACCOUNT_ERRORS.QUOTA_NOT_INTEGER);
      changes.quota = input.quota;
    }
    for (const action of input.manage ?? []) {
      assertMayManage(actor, user, action);
      Object.assign(changes, manageChanges(action));
    }
    const passwordChanged = input.password !== undefined && input.password !== '';
    if (passwordChanged) changes.password = await hashPassword(checkPassword(input.password ?? ''));
    // Quota goes through the lease-aware write, so quota leased out to pods is not counted twice.
    const { quota: desiredQuota, ...otherChanges } = changes;
    // One transaction: a field the store refuses leaves the quota (and its log) unchanged too.
    const updated = await this.#db.transaction().execute(async (trx) => {
      if (desiredQuota !== undefined) await setSpendableQuota(trx, user.id, desiredQuota as number);
      const row =
        Object.keys(otherChanges).length > 0
          ? await updateUser(trx, user.id, otherChanges)
          : await findUserById(trx, user.id);
      if (otherChanges.deleted_at !== undefined) await deletePasskeyOfUser(trx, user.id);
      if (changes.quota !== undefined && changes.quota !== user.quota) {
        await insertLog(
          trx,
          quotaLog(user, actor, `管理员 ${actor.username} 将用户额度从 ${user.quota} 修改为 ${changes.quota}`),
        );
      }
      return row;
    });
    const signedOut = input.manage?.some((action) => action === 'disable' || action === 'delete') ?? false;
    if (passwordChanged || signedOut) await this.#sessions.revokeAll(user.id);
    // The relay caches each key's owner (group, status): tell every pod to read it again.
    await announceAuthChange(this.#bus, { users: [user.id] });
    return (await withLeasedQuota(this.#db, 'user', [updated ?? user]))[0]!;
  }

  /**
   * Adds to, takes from, or overrides what the user may spend, and writes the management log in the same
   * transaction. Add and subtract move the stored balance by `value` (leases held by pods stay theirs);
   * override sets the spendable total, as PUT /api/user/ does. Answers the user and the new spendable quota.
   */
  /**
   * new-api's quota dialog (`add_quota`): add or subtract `value`, or override the balance with it, in one
   * transaction with its management log. A repeated `idempotencyKey` (the dialog sends one per submit, so
   * a double click or a retried request) changes nothing the second time and answers the balance.
   */
  async adjustQuota(
    actor: Actor,
    id: number,
    change: { mode: string | undefined; value: number | undefined; idempotencyKey?: string | undefined },
  ): Promise<{ user: UserRow; quota: number }> {
    const { mode, value, idempotencyKey } = change;
    const user = await this.#target(id);
    assertOutranks(actor, user);
    if (!QUOTA_MODES.includes(mode as QuotaMode)) throw new AppError(ACCOUNT_ERRORS.QUOTA_MODE_INVALID);
    if (value === undefined || !Number.isSafeInteger(value)) throw new AppError(ACCOUNT_ERRORS.QUOTA_NOT_INTEGER);
    if (mode !== 'override' && value <= 0) throw new AppError(ACCOUNT_ERRORS.QUOTA_CHANGE_NOT_POSITIVE);
    let changed = false;
    const quota = await this.#db.transaction().execute(async (trx) => {
      // The row lock orders concurrent submits of one key: the second sees the first one's log.
      await trx.selectFrom('users').select('id').where('id', '=', user.id).forUpdate().execute();
      if (idempotencyKey && (await hasManageLogWithKey(trx, user.id, idempotencyKey))) {
        return (await spendableQuota(trx, user.id)) ?? 0;
      }
      const before = (await spendableQuota(trx, user.id)) ?? 0;
      let content: string;
      if (mode === 'override') {
        await setSpendableQuota(trx, user.id, value);
        content = `管理员 ${actor.username} 将用户额度从 ${before} 覆盖为 ${value}`;
      } else {
        await addQuota(trx, user.id, mode === 'add' ? value : -value);
        content = `管理员 ${actor.username} 为用户${mode === 'add' ? '增加' : '减少'}额度 ${value}`;
      }
      await insertLog(trx, quotaLog(user, actor, content, idempotencyKey));
      changed = true;
      return (await spendableQuota(trx, user.id)) ?? 0;
    });
    if (changed) await announceAuthChange(this.#bus, { users: [user.id] });
    return { user, quota };
  }

  /** Promote, demote, disable, enable or delete; answers the user's new status and role. */
  async manage(actor: Actor, id: number, action: ManageAction): Promise<UserRow> {
    const user = await this.#target(id);
    assertMayManage(actor, user, action);
    // A deleted account's passkey goes with it, in the same transaction.
    const updated = await this.#db.transaction().execute(async (trx) => {
      const row = await updateUser(trx, user.id, manageChanges(action));
      if (action === 'delete') await deletePasskeyOfUser(trx, user.id);
      return row ?? user;
    });
    if (action === 'disable' || action === 'delete') await this.#sessions.revokeAll(user.id);
    await announceAuthChange(this.#bus, { users: [user.id] });
    return updated;
  }

  async #target(id: number): Promise<UserRow> {
    const user = await findUserById(this.#db, id);
    if (!user || user.deleted_at !== null) throw new AppError(ACCOUNT_ERRORS.USER_NOT_FOUND);
    return user;
  }
}
