import { parseDateTime } from '../../format/time.ts';
import { limitsOf, type RateLimitRow, type RateLimits, rateRowsProblem } from '../rate-limits/rate-limits.ts';

/** A token as /rest/token answers it (spec doc 2 §3). */
export interface TokenRecord {
  id: number;
  name: string;
  key: string;
  status: number;
  remain_quota: number;
  used_quota: number;
  unlimited_quota: boolean;
  expired_time: number;
  created_time: number;
  accessed_time?: number;
  model_limits_enabled: boolean;
  model_limits: string;
  allow_ips: string;
  group: string;
  rate_limits: RateLimits;
}

/** Token status (spec doc 2 §4). */
export const TOKEN_STATUS = { enabled: 1, disabled: 2, expired: 3, exhausted: 4 } as const;

/** Table page sizes (spec doc 2 §9). */
export const PAGE_SIZES = [10, 20, 50, 100];

/** Quota presets (spec doc 2 §9): 1$, 10$, 50$, 100$, 500$, 1000$ at 500000 quota a dollar. */
export const QUOTA_PRESETS = [500_000, 5_000_000, 25_000_000, 50_000_000, 250_000_000, 500_000_000];
/** Batch count presets (spec doc 2 §9). */
export const COUNT_PRESETS = [10, 20, 30, 100];
/** New token defaults (spec doc 2 §9): 500000 quota, never expires. */
export const NEW_TOKEN_QUOTA = 500_000;

/** Expiry presets (spec doc 2 §9), in seconds from now; never is -1. */
export const EXPIRY_PRESETS = [
  { key: 'never', seconds: -1, label: 'token.expiry.never' },
  { key: 'month', seconds: 30 * 24 * 3600, label: 'token.expiry.month' },
  { key: 'day', seconds: 24 * 3600, label: 'token.expiry.day' },
  { key: 'hour', seconds: 3600, label: 'token.expiry.hour' },
] as const;

/** What the form holds: the token fields, the expiry as text while edited, and the batch count on create. */
export interface TokenFormValues {
  name?: string;
  remain_quota?: number | string | null;
  unlimited_quota?: boolean;
  /** -1 (never), Unix seconds, or the text typed: '' (never) or yyyy-MM-dd HH:mm:ss. */
  expired_time?: number | string | null;
  model_limits_enabled?: boolean;
  model_limits?: string;
  allow_ips?: string;
  group?: string;
  /** As loaded; the editor's rows replace it once shown. */
  rate_limits?: RateLimits;
  rate_limit_rows?: RateLimitRow[];
  /** Group `auto` only: a failing auto group hands the retry to the next one. */
  cross_group_retry?: boolean;
  count?: number | string | null;
}

/** The expiry as Unix seconds, -1 for never, undefined when the text is not a date. */
export function expiryOf(value: TokenFormValues['expired_time']): number | undefined {
  if (value === undefined || value === null || value === '' || value === -1 || value === '-1') return -1;
  if (typeof value === 'number') return value;
  const date = parseDateTime(value);
  return date ? Math.floor(date.getTime() / 1000) : undefined;
}

const isInteger = (value: unknown) =>
  value !== '' && value !== null && value !== undefined && Number.isSafeInteger(Number(value));

/**
 * Client-side checks (spec doc 2 §5 "Token"), as message keys by field: name required on create, quota an
 * integer ≥ 0, batch count a positive integer (at most 100), expiry a date ("过期时间格式错误！").
 */
export function validateToken(values: TokenFormValues, creating: boolean): Record<string, string> {
  const errors: Record<string, string> = {};
  if (creating && !values.name?.trim()) errors.name = 'token.validation.name_required';
  if (!values.unlimited_quota && (!isInteger(values.remain_quota) || Number(values.remain_quota) < 0)) {
    errors.remain_quota = 'token.validation.quota_invalid';
  }
  if (creating && values.count !== undefined && values.count !== null && values.count !== '') {
    const count = Number(values.count);
    if (!isInteger(values.count) || count < 1 || count > 100) errors.count = 'token.validation.count_invalid';
  }
  if (expiryOf(values.expired_time) === undefined) errors.expired_time = 'token.validation.expiry_invalid';
  const rateProblem = values.rate_limit_rows && rateRowsProblem(values.rate_limit_rows);
  if (rateProblem) errors.rate_limit_rows = rateProblem;
  return errors;
}

/** The body for the gateway: only the token's own fields, the expiry in seconds, quota an integer. */
export function tokenBody(values: TokenFormValues) {
  return {
    name: values.name?.trim() ?? '',
    remain_quota: Math.trunc(Number(values.remain_quota ?? 0)) || 0,
    unlimited_quota: Boolean(values.unlimited_quota),
    expired_time: expiryOf(values.expired_time) ?? -1,
    model_limits_enabled: Boolean(values.model_limits_enabled),
    model_limits: values.model_limits ?? '',
    allow_ips: values.allow_ips ?? '',
    group: values.group ?? '',
    rate_limits: values.rate_limit_rows ? limitsOf(values.rate_limit_rows) : (values.rate_limits ?? {}),
    cross_group_retry: values.group === 'auto' && Boolean(values.cross_group_retry),
  };
}
