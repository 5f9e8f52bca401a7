import { randomBytes } from 'node:crypto';
import { AppError } from '../../errors.ts';
import { REDEMPTION_STATUS } from '../../store/repositories/redemptions.ts';
import { REDEMPTION_ERRORS } from './errors.ts';

export const NAME_MAX = 20;
export const BATCH_MAX = 100;
export const DEFAULT_QUOTA = 100_000;
export const DEFAULT_COUNT = 1;
/** Redemption codes never expire unless given a time (0 = never, reference appendix A). */
export const NEVER = 0;

/** A 32-character code like new-api's (a UUID's 128 random bits in hex). */
export function generateCode(): string {
  return randomBytes(16).toString('hex');
}

export function checkName(name: string | undefined): string {
  const trimmed = name?.trim() ?? '';
  const length = [...trimmed].length;
  if (length === 0 || length > NAME_MAX)
    throw new AppError(REDEMPTION_ERRORS.REDEMPTION_NAME_LENGTH, { max: NAME_MAX });
  return trimmed;
}

export function checkCount(count: number): number {
  if (!Number.isInteger(count) || count <= 0) throw new AppError(REDEMPTION_ERRORS.REDEMPTION_COUNT_NOT_POSITIVE);
  if (count > BATCH_MAX) throw new AppError(REDEMPTION_ERRORS.REDEMPTION_COUNT_TOO_LARGE, { max: BATCH_MAX });
  return count;
}

/** An integer above 0, at most what a token may hold (1e9 × QuotaPerUnit), so balances stay exact. */
export function checkQuota(quota: number, quotaPerUnit: number): number {
  if (!Number.isSafeInteger(quota) || quota <= 0) throw new AppError(REDEMPTION_ERRORS.REDEMPTION_QUOTA_INVALID);
  const max = Math.floor(1_000_000_000 * quotaPerUnit);
  if (quota > max) throw new AppError(REDEMPTION_ERRORS.REDEMPTION_QUOTA_TOO_LARGE, { max });
  return quota;
}

export function checkSettableStatus(status: number): number {
  if (status !== REDEMPTION_STATUS.unused && status !== REDEMPTION_STATUS.disabled) {
    throw new AppError(REDEMPTION_ERRORS.REDEMPTION_STATUS_INVALID);
  }
  return status;
}

/** Quota as new-api writes it into logs: dollars when the site shows currency, else points. */
export function describeQuota(quota: number, showCurrency: boolean, quotaPerUnit: number): string {
  return showCurrency ? `＄${(quota / quotaPerUnit).toFixed(6)} 额度` : `${quota} 点额度`;
}
