import type { TokenRow } from '../../store/repositories/tokens.ts';
import type { Keyring } from '../keyring.ts';
import { KEY_PREFIX } from './keys.ts';
import { effectiveTokenStatus } from './rules.ts';

/**
 * A token as its owner sees it (spec doc 2 §3): the key in full with `sk-`, because the console copies
 * keys and builds chat links from the list; never the HMAC or the ciphertext.
 */
export function tokenView(row: TokenRow, keyring: Keyring, now: number) {
  return {
    id: row.id,
    user_id: row.user_id,
    name: row.name,
    key: revealKey(row, keyring),
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
    managed_by: row.managed_by,
    managed_namespace: row.managed_namespace,
    managed_name: row.managed_name,
  };
}

export type TokenView = ReturnType<typeof tokenView>;

/**
 * `sk-<key>`, or '' when the ciphertext no longer opens (SECRET_KEY changed): one unreadable key must
 * not break the owner's whole list, and such a key cannot authenticate anyway (its HMAC changed too).
 */
export function revealKey(row: Pick<TokenRow, 'key_encrypted'>, keyring: Keyring): string {
  try {
    return KEY_PREFIX + keyring.decrypt(row.key_encrypted);
  } catch {
    return '';
  }
}
