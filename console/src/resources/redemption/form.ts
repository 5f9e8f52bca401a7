/** A redemption code as the gateway answers it (spec doc 2 §3). */
export interface Redemption {
  id: number;
  user_id: number;
  key: string;
  name: string;
  status: number;
  quota: number;
  created_time: number;
  redeemed_time: number;
  used_user_id: number;
  expired_time: number;
}

/** Spec doc 2 §4: 1 unused, 2 disabled, 3 used. */
export const REDEMPTION_STATUS = { unused: 1, disabled: 2, used: 3 } as const;

/** Spec doc 2 §9: quota 100000, count 1; §5: name 1-20 characters, at most 100 codes a batch. */
export const REDEMPTION_DEFAULTS = { quota: 100_000, count: 1 };
export const NAME_MAX = 20;
export const COUNT_MAX = 100;

export interface RedemptionFormValues {
  name: string;
  /** Quota as typed (an integer). */
  quota: string;
  count: string;
  /** datetime-local text; empty means never. */
  expiry: string;
}

/** Unix seconds for a datetime-local text (local time); 0 for empty; NaN when it does not parse. */
export function expiryToSeconds(text: string): number {
  if (text.trim() === '') return 0;
  const ms = new Date(text).getTime();
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : Number.NaN;
}

/** datetime-local text for Unix seconds (0 or less: empty). */
export function secondsToExpiry(seconds: number): string {
  if (!seconds || seconds <= 0) return '';
  const date = new Date(seconds * 1000);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/**
 * The create/edit checks (spec doc 2 §5 Redemption): name 1-20 characters (an empty name on create
 * becomes the formatted quota, spec doc 2 §9), a positive integer quota, 1-100 codes, an expiry that
 * parses and is not in the past. Answers the first problem's message key.
 */
export function validateRedemption(
  values: RedemptionFormValues,
  creating: boolean,
  now = Date.now() / 1000,
): string | undefined {
  const name = values.name.trim();
  if ((!creating && name.length === 0) || [...name].length > NAME_MAX) return 'redemption.validation.name_length';
  if (!/^\d+$/.test(values.quota.trim()) || Number(values.quota) <= 0) return 'redemption.validation.quota_positive';
  if (creating) {
    const count = values.count.trim();
    if (!/^\d+$/.test(count) || Number(count) < 1 || Number(count) > COUNT_MAX) {
      return 'redemption.validation.count_range';
    }
  }
  const expiry = expiryToSeconds(values.expiry);
  if (Number.isNaN(expiry)) return 'redemption.validation.expiry_invalid';
  if (expiry !== 0 && expiry < now) return 'redemption.validation.expiry_past';
  return undefined;
}

/** Whether an unused code is past its expiry (shown as expired). */
export function isExpired(code: Pick<Redemption, 'status' | 'expired_time'>, now = Date.now() / 1000): boolean {
  return code.status === REDEMPTION_STATUS.unused && code.expired_time > 0 && code.expired_time < now;
}
