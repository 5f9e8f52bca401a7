import { AppError } from '../../errors.ts';
import type { UserRow } from '../../store/database.ts';
import { ACCOUNT_ERRORS } from './errors.ts';
import { ROLE } from './rules.ts';

export type ManageAction = 'promote' | 'demote' | 'disable' | 'enable' | 'delete';
export const MANAGE_ACTIONS: readonly ManageAction[] = ['promote', 'demote', 'disable', 'enable', 'delete'];

type Actor = Pick<UserRow, 'id' | 'role'>;
type Target = Pick<UserRow, 'id' | 'role'>;

/** Spec doc 1 §6: an administrator acts only on users of a strictly lower level. */
export function assertOutranks(actor: Actor, target: Target): void {
  if (actor.role <= target.role) throw new AppError(ACCOUNT_ERRORS.SAME_OR_HIGHER_LEVEL);
}

/** The role a user gets from `action`, after every rule of spec doc 1 §6 is checked. */
export function assertMayManage(actor: Actor, target: Target, action: ManageAction): void {
  if (target.role >= ROLE.root && action !== 'enable' && action !== 'promote') {
    throw new AppError(ACCOUNT_ERRORS.ROOT_PROTECTED);
  }
  assertOutranks(actor, target);
  if (action === 'promote' && actor.role < ROLE.root) throw new AppError(ACCOUNT_ERRORS.CANNOT_PROMOTE_TO_ADMIN);
}

export function assertMayCreateRole(actor: Actor, role: number): void {
  if (role >= actor.role) throw new AppError(ACCOUNT_ERRORS.CANNOT_CREATE_HIGHER_ROLE);
}
