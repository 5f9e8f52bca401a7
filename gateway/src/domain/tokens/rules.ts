import { isIP } from 'node:net';
import { AppError } from '../../errors.ts';
import { TOKEN_STATUS, type TokenRow } from '../../store/repositories/tokens.ts';
import { TOKEN_ERRORS } from './errors.ts';

export const NAME_MAX = 50;
export const BATCH_MAX = 100;
export const DEFAULT_REMAIN_QUOTA = 500_000;
/** Batch-created names get `-` and this many random letters or digits (spec doc 2 §9). */
export const SUFFIX_LENGTH = 6;
/** The group value that lets the relay pick among the auto groups. */
export const AUTO_GROUP = 'auto';

/** A trimmed, non-empty name of at most `max` characters (code points, so CJK names get the full length). */
export function checkName(name: string | undefined, max = NAME_MAX): string {
  const trimmed = name?.trim() ?? '';
  if (trimmed === '') throw new AppError(TOKEN_ERRORS.TOKEN_NAME_REQUIRED);
  if ([...trimmed].length > max) throw new AppError(TOKEN_ERRORS.TOKEN_NAME_TOO_LONG, { max });
  return trimmed;
}

/** An integer ≥ 0; above 1e9 × QuotaPerUnit only when the token is unlimited anyway (reference §3.2). */
export function checkRemainQuota(quota: number, unlimited: boolean, quotaPerUnit: number): number {
  if (!Number.isSafeInteger(quota)) throw new AppError(TOKEN_ERRORS.TOKEN_QUOTA_NOT_INTEGER);
  if (quota < 0) throw new AppError(TOKEN_ERRORS.TOKEN_QUOTA_NEGATIVE);
  const max = Math.floor(1_000_000_000 * quotaPerUnit);
  if (!unlimited && quota > max) throw new AppError(TOKEN_ERRORS.TOKEN_QUOTA_TOO_LARGE, { max });
  return quota;
}

export function checkCount(count: number): number {
  if (!Number.isInteger(count) || count < 1 || count > BATCH_MAX) {
    throw new AppError(TOKEN_ERRORS.TOKEN_COUNT_INVALID, { max: BATCH_MAX });
  }
  return count;
}

/** Model names as a comma list without blanks or repeats, in the order given. */
export function normalizeModelLimits(text: string): string {
  return [...new Set(text.split(',').map((model) => model.trim()))].filter(Boolean).join(',');
}

/**
 * The IP allow-list: one IPv4/IPv6 address or CIDR per line (commas and spaces also separate,
 * as pasted lists often use them), each checked, stored one per line.
 */
export function normalizeAllowIps(text: string): string {
  const entries = text.split(/[\s,]+/).filter(Boolean);
  for (const entry of entries) {
    if (!isIpOrCidr(entry)) throw new AppError(TOKEN_ERRORS.TOKEN_ALLOW_IP_INVALID, { ip: entry });
  }
  return [...new Set(entries)].join('\n');
}

function isIpOrCidr(entry: string): boolean {
  const [address = '', prefix, extra] = entry.split('/');
  if (extra !== undefined) return false;
  const version = isIP(address);
  if (version === 0) return false;
  if (prefix === undefined) return true;
  if (!/^\d{1,3}$/.test(prefix)) return false;
  return Number(prefix) <= (version === 4 ? 32 : 128);
}

/** Only enable and disable are offered (spec doc 2 §4); expired/exhausted are the system's to set. */
export function checkSettableStatus(status: number): number {
  if (status !== TOKEN_STATUS.enabled && status !== TOKEN_STATUS.disabled) {
    throw new AppError(TOKEN_ERRORS.TOKEN_STATUS_INVALID);
  }
  return status;
}

type Lifetime = Pick<TokenRow, 'expired_time' | 'remain_quota' | 'unlimited_quota'>;

export const isExpired = (token: Lifetime, now: number) => token.expired_time !== -1 && token.expired_time <= now;
export const isExhausted = (token: Lifetime) => !token.unlimited_quota && token.remain_quota <= 0;

/** An expired or exhausted token cannot be enabled (spec doc 2 §5), with new-api's messages. */
export function assertMayEnable(token: Lifetime, now: number): void {
  if (isExpired(token, now)) throw new AppError(TOKEN_ERRORS.TOKEN_EXPIRED_CANNOT_ENABLE);
  if (isExhausted(token)) throw new AppError(TOKEN_ERRORS.TOKEN_EXHAUSTED_CANNOT_ENABLE);
}

/** The status a token shows: an enabled one past its expiry is expired (3), one out of quota exhausted (4). */
export function effectiveTokenStatus(token: Lifetime & Pick<TokenRow, 'status'>, now: number): number {
  if (token.status !== TOKEN_STATUS.enabled) return token.status;
  if (isExpired(token, now)) return TOKEN_STATUS.expired;
  if (isExhausted(token)) return TOKEN_STATUS.exhausted;
  return token.status;
}
