import { type Kysely, sql } from 'kysely';
import { AppError, defineErrors } from '../../errors.ts';
import type { Database, UserRow } from '../../store/database.ts';
import type { IdentityColumn } from './oauth/types.ts';

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
      zh: '这是该账户唯一的登录方式：请先设置密码或绑定其他账户，再解除{provider}绑定',
      en: 'This is the only way to sign in to the account: set a password or bind another account before unbinding {provider}',
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
];

export interface BindingInfo {
  provider: BuiltinBinding;
  providerUserId: string;
}

/** The providers bound to the user, in the table's order. */
export function bindingsOf(user: UserRow): BindingInfo[] {
  return BUILTIN_BINDINGS.filter((provider) => user[provider.column] !== '').map((provider) => ({
    provider,
    providerUserId: user[provider.column],
  }));
}

/**
 * Accounts created through a provider store an empty password hash: nobody knows a password for them
 * until one is set (email reset, or an administrator), and an empty hash never verifies.
 */
export const hasPassword = (user: Pick<UserRow, 'password'>) => user.password !== '';

export function builtinBinding(slug: string): BuiltinBinding {
  const provider = BUILTIN_BINDINGS.find((p) => p.slug === slug.trim().toLowerCase());
  if (!provider) throw new AppError(BINDING_ERRORS.BINDING_PROVIDER_UNKNOWN, { provider: slug.slice(0, 64) });
  return provider;
}

/**
 * Removes the user's binding to `slug`, unless it is their last way to sign in (no password and no other
 * binding). One conditional UPDATE: two unbinds racing for the last two bindings cannot both succeed,
 * because Postgres re-checks the condition on the row the first one changed.
 */
export async function unbind(db: Kysely<Database>, user: UserRow, slug: string): Promise<void> {
  const provider = builtinBinding(slug);
  const others = BUILTIN_BINDINGS.filter((p) => p !== provider).map((p) => sql`${sql.ref(p.column)} <> ''`);
  const result = await db
    .updateTable('users')
    .set({ [provider.column]: '' })
    .where('id', '=', user.id)
    .where(provider.column, '<>', '')
    .where(sql<boolean>`(password <> '' or ${sql.join(others, sql` or `)})`)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) > 0) return;
  // Nothing changed: say why, from the row as it is now.
  const current = await db
    .selectFrom('users')
    .select(['password', provider.column])
    .where('id', '=', user.id)
    .executeTakeFirst();
  if (!current || current[provider.column] === '') {
    throw new AppError(BINDING_ERRORS.BINDING_NOT_FOUND, { provider: provider.label });
  }
  throw new AppError(BINDING_ERRORS.BINDING_LAST_SIGN_IN, { provider: provider.label });
}

/**
 * An administrator clears the user's email (new-api's binding type `email`). It is no way to sign in by
 * itself (email sign-in still needs the password), so the last-way rule does not apply.
 */
export async function clearEmail(db: Kysely<Database>, user: UserRow): Promise<void> {
  const result = await db
    .updateTable('users')
    .set({ email: '' })
    .where('id', '=', user.id)
    .where('email', '<>', '')
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) throw new AppError(BINDING_ERRORS.BINDING_NOT_FOUND, { provider: 'email' });
}
