import type { TokenRow } from '../../store/repositories/tokens.ts';
import type { Keyring } from '../keyring.ts';
import { parsePeriodLimits, periodLimitFields } from '../ledger/periods/limits.ts';
import { readRateLimits } from '../rate-limits.ts';
import { effectiveTokenStatus } from './rules.ts';

/**
 * A token as its owner sees it in lists and details: the key masked and without `sk-`, as new-api answers
 * it (its clients put `sk-` in front); the full key only through `revealKey` (POST /api/token/{id}/key),
 * so a list on screen or in a log never carries a usable secret. Never the HMAC or the ciphertext.
 */
export function tokenView(row: TokenRow, keyring: Keyring, now: number) {
  return tokenViewWithKey(row, maskKey(revealKey(row, keyring)), now);
}

/** The same view with the full key: for the answer that creates the token, the owner's one look at it. */
export function createdTokenView(row: TokenRow, keyring: Keyring, now: number) {
  return tokenViewWithKey(row, revealKey(row, keyring), now);
}

function tokenViewWithKey(row: TokenRow, key: string, now: number) {
  return {
    id: row.id,
    user_id: row.user_id,
    name: row.name,
    key,
    status: effectiveTokenStatus(row, now),
    created_time: row.created_time,
    accessed_time: row.accessed_time,
    expired_time: row.expired_time,
    remain_quota: row.remain_quota,
    unlimited_quota: row.unlimited_quota,
    used_quota: row.used_quota,
    model_limits_enabled: row.model_limits_enabled,
    model_limits: row.model_limits,
    allow_ips: row.allow_ips,
    group: row.group,
    cross_group_retry: row.cross_group_retry,
    rate_limits: readRateLimits(row.rate_limits),
    managed_by: row.managed_by,
    managed_namespace: row.managed_namespace,
    managed_name: row.managed_name,
    ...periodLimitFields(parsePeriodLimits(row.period_limits)),
  };
}

export type TokenView = ReturnType<typeof tokenView>;

/**
 * The full key without `sk-`, or '' when the ciphertext no longer opens (SECRET_KEY changed): one
 * unreadable key must not break the owner's whole list, and such a key cannot authenticate anyway (its
 * HMAC changed too).
 */
export function revealKey(row: Pick<TokenRow, 'key_encrypted'>, keyring: Keyring): string {
  try {
    return keyring.decrypt(row.key_encrypted);
  } catch {
    return '';
  }
}

/** The first and last four characters, enough to tell keys apart and useless to anyone who reads it. */
export function maskKey(key: string): string {
  if (key.length <= 8) return '*'.repeat(key.length);
  return `${key.slice(0, 4)}${'*'.repeat(10)}${key.slice(-4)}`;
}
