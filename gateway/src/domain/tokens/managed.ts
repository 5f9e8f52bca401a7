import type { Kysely, Updateable } from 'kysely';
import type { Bus } from '../../cluster/types.ts';
import { AppError } from '../../errors.ts';
import type { Database, TokensTable } from '../../store/database.ts';
import { insertTokens, TOKEN_STATUS, type TokenRow } from '../../store/repositories/tokens.ts';
import { findLiveUserBy } from '../../store/repositories/users.ts';
import { announceAuthChange } from '../auth-changes.ts';
import type { Keyring } from '../keyring.ts';
import { managedColumns, OPERATOR_MANAGER, type ResourceRef, type SpecRejection } from '../managed-resource.ts';
import { TOKEN_ERRORS } from './errors.ts';
import { generateKey, KEY_PREFIX } from './keys.ts';
import { checkName, NAME_MAX, normalizeAllowIps, normalizeModelLimits } from './rules.ts';

/**
 * API tokens declared by AccessToken custom resources, for in-cluster workloads. The key is made
 * once, when the token is created, and kept: the operator hands it to the workload in a Secret.
 */

export interface ManagedTokenSpec {
  /** Username of the owner. */
  user: string;
  /** The token's name in the console (cut to the gateway's limit). */
  name: string;
  /** Empty: the user's own group at the time of each request. */
  group?: string | undefined;
  /** Empty: any model. */
  models?: readonly string[] | undefined;
  unlimitedQuota: boolean;
  /** The token's remaining quota: written when the token is created and when `applyQuota` is set. */
  quota?: number | undefined;
  applyQuota: boolean;
  /** Unix seconds; -1 or undefined for never. */
  expiresAt?: number | undefined;
  allowIps?: readonly string[] | undefined;
}

export type ManagedTokenResult =
  | {
      ok: true;
      tokenId: number;
      /** The full key as clients send it (`sk-…`). */
      key: string;
      created: boolean;
      changed: boolean;
    }
  | SpecRejection;

export interface ManagedTokenDeps {
  db: Kysely<Database>;
  keyring: Keyring;
  bus?: Bus | undefined;
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Makes the token `owner` declares exist and match `spec`; idempotent. */
export async function applyManagedToken(
  deps: ManagedTokenDeps,
  owner: ResourceRef,
  spec: ManagedTokenSpec,
): Promise<ManagedTokenResult> {
  let fields: ReturnType<typeof tokenFields>;
  try {
    fields = tokenFields(spec);
  } catch (error) {
    if (error instanceof AppError) return { ok: false, code: error.code, message: error.message };
    throw error;
  }
  const user = await findLiveUserBy(deps.db, 'username', spec.user);
  if (!user) return { ok: false, code: 'USER_NOT_FOUND', message: `user ${spec.user} does not exist` };

  const result = await deps.db.transaction().execute(async (trx) => {
    const existing = await trx
      .selectFrom('tokens')
      .selectAll()
      .where('managed_by', '=', OPERATOR_MANAGER)
      .where('managed_uid', '=', owner.uid)
      .where('deleted_at', 'is', null)
      .orderBy('id')
      .limit(1)
      .forUpdate()
      .executeTakeFirst();
    if (!existing) {
      const key = generateKey();
      const [row] = await insertTokens(trx, [
        {
          ...fields,
          user_id: user.id,
          remain_quota: spec.unlimitedQuota ? 0 : (spec.quota ?? 0),
          status: TOKEN_STATUS.enabled,
          created_time: nowSeconds(),
          key_hmac: deps.keyring.hmac(key),
          key_encrypted: deps.keyring.encrypt(key),
          ...managedColumns(owner),
        },
      ]);
      return { row: row!, created: true, changed: true };
    }
    const desired: Updateable<TokensTable> = { ...fields, user_id: user.id, ...managedColumns(owner) };
    if (spec.applyQuota && !spec.unlimitedQuota) desired.remain_quota = spec.quota ?? 0;
    const changes = Object.fromEntries(
      Object.entries(desired).filter(([column, value]) => existing[column as keyof TokenRow] !== value),
    ) as Updateable<TokensTable>;
    if (Object.keys(changes).length === 0) return { row: existing, created: false, changed: false };
    const row = await trx
      .updateTable('tokens')
      .set(changes)
      .where('id', '=', existing.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    return { row, created: false, changed: true };
  });
  if (result.changed && !result.created) await announceAuthChange(deps.bus, { tokens: [result.row.id] });
  return {
    ok: true,
    tokenId: result.row.id,
    key: KEY_PREFIX + deps.keyring.decrypt(result.row.key_encrypted),
    created: result.created,
    changed: result.changed,
  };
}

/** Deletes the tokens `uid` declares, as the API deletes tokens (soft); answers their ids. */
export async function deleteManagedToken(deps: Omit<ManagedTokenDeps, 'keyring'>, uid: string): Promise<number[]> {
  const deleted = await deps.db
    .updateTable('tokens')
    .set({ deleted_at: nowSeconds() })
    .where('managed_by', '=', OPERATOR_MANAGER)
    .where('managed_uid', '=', uid)
    .where('deleted_at', 'is', null)
    .returning('id')
    .execute();
  const ids = deleted.map((r) => r.id);
  if (ids.length > 0) await announceAuthChange(deps.bus, { tokens: ids });
  return ids;
}

/** The configuration columns a spec sets, checked by the same rules as the API's. */
function tokenFields(spec: ManagedTokenSpec) {
  const name = checkName([...spec.name.trim()].slice(0, NAME_MAX).join(''));
  const models = normalizeModelLimits((spec.models ?? []).join(','));
  if (!spec.unlimitedQuota) {
    if (!Number.isSafeInteger(spec.quota ?? 0)) throw new AppError(TOKEN_ERRORS.TOKEN_QUOTA_NOT_INTEGER);
    if ((spec.quota ?? 0) < 0) throw new AppError(TOKEN_ERRORS.TOKEN_QUOTA_NEGATIVE);
  }
  return {
    name,
    group: spec.group?.trim() ?? '',
    model_limits_enabled: models !== '',
    model_limits: models,
    allow_ips: normalizeAllowIps((spec.allowIps ?? []).join('\n')),
    unlimited_quota: spec.unlimitedQuota,
    expired_time: spec.expiresAt === undefined || spec.expiresAt < 0 ? -1 : spec.expiresAt,
    cross_group_retry: false,
  };
}
