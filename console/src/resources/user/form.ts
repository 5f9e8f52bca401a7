import type { UserRecord } from '../../user.ts';
import type { RateLimits } from '../rate-limits/rate-limits.ts';

/** A user as the management API answers it (spec doc 1 §3 "User"). */
export interface ManagedUser extends UserRecord {
  inviter_id: number;
  remark: string;
  rate_limits?: RateLimits;
  DeletedAt: string | null;
}

/** Spec doc 1 §4: 1 activated, 2 banned; roles 1, 10, 100. */
export const USER_STATUS = { enabled: 1, banned: 2, unusable: 3 } as const;
export const USER_ROLE = { user: 1, admin: 10, root: 100 } as const;

export type ManageAction = 'promote' | 'demote' | 'disable' | 'enable' | 'delete';

/**
 * The row actions an administrator is offered (spec doc 1 §4, §6): promote (regular users; only a
 * super administrator may promote), demote (administrators), disable (status 1 only), enable (status 3
 * shows it disabled), edit, delete. A deregistered user gets none. Users of the viewer's level or above
 * show them disabled (the gateway refuses them), except editing oneself (at /user/edit).
 */
export function rowActions(
  user: Pick<ManagedUser, 'role' | 'status' | 'DeletedAt'>,
  viewerRole: number,
  self = false,
): Array<{ action: ManageAction | 'edit'; disabled?: boolean }> {
  if (user.DeletedAt) return [];
  const outranked = user.role >= viewerRole;
  const actions: Array<{ action: ManageAction | 'edit'; disabled?: boolean }> = [];
  if (user.role < USER_ROLE.admin && viewerRole >= USER_ROLE.root) actions.push({ action: 'promote' });
  if (user.role >= USER_ROLE.admin && user.role < USER_ROLE.root) actions.push({ action: 'demote' });
  if (user.status === USER_STATUS.enabled) actions.push({ action: 'disable' });
  else actions.push({ action: 'enable', disabled: user.status === USER_STATUS.unusable });
  actions.push({ action: 'edit' }, { action: 'delete' });
  return actions.map((entry) => {
    const blocked = entry.action === 'edit' ? outranked && !self : outranked;
    return blocked ? { ...entry, disabled: true } : entry;
  });
}

export interface UserFormValues {
  username: string;
  display_name: string;
  password: string;
  group: string;
  quota: string;
  remark: string;
}

/** Add user (spec doc 1 §5): username and password required. */
export function validateNewUser(values: Pick<UserFormValues, 'username' | 'password'>): string | undefined {
  if (values.username.trim() === '' || values.password === '')
    return 'user_admin.validation.username_password_required';
  return undefined;
}

/** Edit user (spec doc 1 §5): a new password of at least 8 characters, an integer quota. */
export function validateEditUser(values: UserFormValues): string | undefined {
  if (values.username.trim() === '') return 'user_admin.validation.username_required';
  if (values.password !== '' && values.password.length < 8) return 'user_admin.validation.password_short';
  if (!/^-?\d+$/.test(values.quota.trim())) return 'user_admin.validation.quota_integer';
  return undefined;
}

/** The add-quota dialog takes any integer, negative ones too (spec doc 1 §5). */
export function addQuota(current: string, delta: string): string | undefined {
  if (!/^-?\d+$/.test(delta.trim()) || !/^-?\d+$/.test(current.trim())) return undefined;
  return String(Number(current) + Number(delta));
}
