import type { Kysely, Transaction } from 'kysely';
import { AppError, defineErrors } from '../../errors.ts';
import type { Database, UserRow } from '../../store/database.ts';
import { findPasskeyOfUser } from '../../store/repositories/passkeys.ts';
import type { IdentityColumn, IdentityHome } from './oauth/types.ts';

export const BINDING_ERRORS = defineErrors({
  BINDING_PROVIDER_UNKNOWN: {
    status: 400,
    message: { zh: '未知的绑定类型：{provider}', en: 'Unknown binding type: {provider}' },
  },
  BINDING_NOT_FOUND: {
    status: 404,
    message: { zh: '未绑定{provider}账户', en: 'No {provider} account is bound' },
  },
  BINDING_LAST_SIGN_IN: {
    status: 409,
    message: {
      zh: '这是该账户唯一的登录方式：请先设置密码、添加 Passkey 或绑定其他账户，再解除{provider}绑定',
      en: 'This is the only way to sign in to the account: set a password, add a passkey or bind another account before unbinding {provider}',
    },
  },
});

/** A third-party identity stored on the user row, as the bindings routes name it. */
export interface BuiltinBinding {
  slug: string;
  label: string;
  column: IdentityColumn;
}

/** Every provider whose account id lives in a users column; the route's `provider` is the slug. */
export const BUILTIN_BINDINGS: readonly BuiltinBinding[] = [
  { slug: 'github', label: 'GitHub', column: 'github_id' },
  { slug: 'oidc', label: 'OIDC', column: 'oidc_id' },
  { slug: 'linuxdo', label: 'LinuxDO', column: 'linux_do_id' },
  { slug: 'wechat', label: 'WeChat', column: 'wechat_id' },
  { slug: 'telegram', label: 'Telegram', column: 'telegram_id' },
  { slug: 'discord', label: 'Discord', column: 'discord_id' },
];

/** One bound provider account, built-in (id = slug) or custom (id = the provider's numeric id). */
export interface BindingInfo {
  providerId: string | number;
  name: string;
  slug: string;
  icon: string;
  providerUserId: string;
}

type Db = Kysely<Database>;

/** The providers bound to the user: the built-in ones in the table's order, then the custom ones by id. */
export async function bindingsOf(db: Db, user: UserRow): Promise<BindingInfo[]> {
  const builtin = BUILTIN_BINDINGS.filter((provider) => user[provider.column] !== '').map((provider) => ({
    providerId: provider.slug,
    name: provider.label,
    slug: provider.slug,
    icon: '',
    providerUserId: user[provider.column],
  }));
  const custom = await db
    .selectFrom('user_oauth_bindings as b')
    .innerJoin('custom_oauth_providers as p', 'p.id', 'b.provider_id')
    .select(['p.id', 'p.name', 'p.slug', 'p.icon', 'b.provider_user_id'])
    .where('b.user_id', '=', user.id)
    .orderBy('p.id')
    .execute();
  return [
    ...builtin,
    ...custom.map((row) => ({
      providerId: row.id,
      name: row.name,
      slug: row.slug,
      icon: row.icon,
      providerUserId: row.provider_user_id,
    })),
  ];
}

/**
 * Accounts created through a provider store an empty password hash: nobody knows a password for them
 * until one is set (email reset, or an administrator), and an empty hash never verifies.
 */
export const hasPassword = (user: Pick<UserRow, 'password'>) => user.password !== '';

/** A way to sign in that can be taken away: a provider account (built-in or custom), or the passkey. */
export type SignInWay = IdentityHome | { kind: 'passkey' };

/**
 * Whether the user can still sign in once `removed` is gone: a password, another built-in provider,
 * another custom provider binding, or a passkey. The one place that answers it: every new way to sign in
 * joins here. Call it inside the transaction that removes `removed`, after locking the user row.
 */
export async function keepsAnotherWayToSignIn(
  trx: Transaction<Database>,
  userId: number,
  removed: SignInWay,
): Promise<boolean> {
  const user = await trx.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirst();
  if (!user) return false;
  if (hasPassword(user)) return true;
  const otherColumn = BUILTIN_BINDINGS.some(
    ({ column }) => user[column] !== '' && !(removed.kind === 'column' && removed.column === column),
  );
  if (otherColumn) return true;
  let others = trx.selectFrom('user_oauth_bindings').select('id').where('user_id', '=', userId);
  if (removed.kind === 'binding') others = others.where('provider_id', '<>', removed.providerId);
  if ((await others.executeTakeFirst()) !== undefined) return true;
  return removed.kind !== 'passkey' && (await findPasskeyOfUser(trx, userId)) !== undefined;
}

/**
 * Removes the user's binding to a provider: a built-in slug, or a custom provider's numeric id (as
 * new-api's routes take them). Refused when it is their last way to sign in. The user row is locked for
 * the check and the removal, so two unbinds racing for the last two ways cannot both succeed.
 */
export async function unbind(db: Db, user: UserRow, provider: string): Promise<void> {
  const target = await bindingTarget(db, provider);
  await db.transaction().execute(async (trx) => {
    await trx.selectFrom('users').select('id').where('id', '=', user.id).forUpdate().execute();
    const bound =
      target.home.kind === 'column'
        ? await trx
            .selectFrom('users')
            .select('id')
            .where('id', '=', user.id)
            .where(target.home.column, '<>', '')
            .executeTakeFirst()
        : await trx
            .selectFrom('user_oauth_bindings')
            .select('id')
            .where('user_id', '=', user.id)
            .where('provider_id', '=', target.home.providerId)
            .executeTakeFirst();
    if (!bound) throw new AppError(BINDING_ERRORS.BINDING_NOT_FOUND, { provider: target.label });
    if (!(await keepsAnotherWayToSignIn(trx, user.id, target.home))) {
      throw new AppError(BINDING_ERRORS.BINDING_LAST_SIGN_IN, { provider: target.label });
    }
    if (target.home.kind === 'column') {
      await trx
        .updateTable('users')
        .set({ [target.home.column]: '' })
        .where('id', '=', user.id)
        .execute();
    } else {
      await trx
        .deleteFrom('user_oauth_bindings')
        .where('user_id', '=', user.id)
        .where('provider_id', '=', target.home.providerId)
        .execute();
    }
  });
}

/** A provider named by a route: a built-in slug, a custom provider's id, or its slug. */
async function bindingTarget(db: Db, provider: string): Promise<{ home: IdentityHome; label: string }> {
  const name = provider.trim().toLowerCase();
  const builtin = BUILTIN_BINDINGS.find((p) => p.slug === name);
  if (builtin) return { home: { kind: 'column', column: builtin.column }, label: builtin.label };
  const id = /^\d{1,9}$/.test(name) ? Number(name) : undefined;
  const custom = await db
    .selectFrom('custom_oauth_providers')
    .select(['id', 'name'])
    .where((eb) => (id === undefined ? eb('slug', '=', name) : eb('id', '=', id)))
    .executeTakeFirst();
  if (!custom) throw new AppError(BINDING_ERRORS.BINDING_PROVIDER_UNKNOWN, { provider: provider.slice(0, 64) });
  return { home: { kind: 'binding', providerId: custom.id }, label: custom.name };
}

/**
 * An administrator clears the user's email (new-api's binding type `email`). It is no way to sign in by
 * itself (email sign-in still needs the password), so the last-way rule does not apply.
 */
export async function clearEmail(db: Db, user: UserRow): Promise<void> {
  const result = await db
    .updateTable('users')
    .set({ email: '' })
    .where('id', '=', user.id)
    .where('email', '<>', '')
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) throw new AppError(BINDING_ERRORS.BINDING_NOT_FOUND, { provider: 'email' });
}
