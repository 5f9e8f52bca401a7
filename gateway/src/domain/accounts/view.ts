import type { UserRow } from '../../store/database.ts';
import type { Keyring } from '../keyring.ts';
import { parsePeriodLimits, periodLimitFields } from '../ledger/periods/limits.ts';
import { readRateLimits } from '../rate-limits.ts';
import { ROLE } from './rules.ts';
import { publicSetting, readSetting } from './settings.ts';

/** A user as the API shows it: never the password hash, the access token or the webhook secret. */
export function userView(user: UserRow, keyring: Keyring) {
  return {
    id: user.id,
    username: user.username,
    display_name: user.display_name,
    role: user.role,
    status: user.status,
    email: user.email,
    github_id: user.github_id,
    oidc_id: user.oidc_id,
    wechat_id: user.wechat_id,
    telegram_id: user.telegram_id,
    linux_do_id: user.linux_do_id,
    discord_id: user.discord_id,
    quota: user.quota,
    used_quota: user.used_quota,
    request_count: user.request_count,
    group: user.group,
    aff_code: user.aff_code ?? '',
    aff_count: user.aff_count,
    aff_quota: user.aff_quota,
    aff_history_quota: user.aff_history_quota,
    inviter_id: user.inviter_id,
    setting: publicSetting(readSetting(user.setting, keyring)),
    remark: user.remark,
    rate_limits: readRateLimits(user.rate_limits),
    created_at: user.created_at,
    last_login_at: user.last_login_at,
    DeletedAt: user.deleted_at === null ? null : new Date(user.deleted_at * 1000).toISOString(),
    ...periodLimitFields(parsePeriodLimits(user.period_limits)),
  };
}

export type UserView = ReturnType<typeof userView>;

/**
 * What new-api's front end reads about its own sidebar from GET /api/user/self: `sidebar_settings` offers
 * the per-user sidebar editor, which Tollgate does not keep (so never); `sidebar_modules` lists the areas
 * the role may not open: no administration below role 10, and no system settings below root.
 */
export function sidebarPermissions(role: number) {
  const sidebarModules =
    role >= ROLE.root ? {} : role >= ROLE.admin ? { admin: { setting: false } } : { admin: false as const };
  return { sidebar_settings: false, sidebar_modules: sidebarModules };
}

/** The signed-in user's own record: the user, plus the sidebar fields new-api's front end reads. */
export function selfView(user: UserRow, keyring: Keyring) {
  // sidebar_modules is the user's saved sidebar layout as JSON text; "" (none) means the defaults.
  return { ...userView(user, keyring), sidebar_modules: '', permissions: sidebarPermissions(user.role) };
}

/** What the console keeps locally after sign-in (spec doc 1 §3 "Session user"). */
export function sessionUserView(user: UserRow) {
  return {
    id: user.id,
    username: user.username,
    display_name: user.display_name,
    role: user.role,
    status: user.status,
    group: user.group,
  };
}
