import { defineErrors, type ErrorSpec } from '../../errors.ts';

/**
 * Quota refusals, with new-api's codes, statuses and wording (reference §3.3): clients and
 * dashboards match on them. new-api answers the user cases in Chinese and the token case in
 * English whatever the language; the other language here is a translation.
 */
export const LEDGER_ERRORS = defineErrors({
  /** The user has nothing left at all (balance <= 0). */
  insufficient_user_quota: {
    status: 403,
    message: { zh: '用户额度不足, 剩余额度: {remain}', en: 'user quota is not enough, remaining quota: {remain}' },
  },
  pre_consume_token_quota_failed: {
    status: 403,
    message: {
      zh: 'token quota is not enough, token remain quota: {remain}, need quota: {need}',
      en: 'token quota is not enough, token remain quota: {remain}, need quota: {need}',
    },
  },
  quota_ledger_closed: {
    status: 503,
    message: { zh: '网关正在关闭，请重试', en: 'The gateway is shutting down; please retry' },
  },
});

/** The user has something left, but less than the request reserves: same code, new-api's other wording. */
export const USER_QUOTA_BELOW_RESERVE: ErrorSpec = {
  ...LEDGER_ERRORS.insufficient_user_quota,
  message: {
    zh: '预扣费额度失败, 用户剩余额度: {remain}, 需要预扣费额度: {need}',
    en: 'pre-consume quota failed, user remaining quota: {remain}, need quota: {need}',
  },
};

/** new-api's `FormatQuota` with its defaults (DisplayInCurrency on, 500,000 quota per USD). */
export function defaultFormatQuota(quota: number): string {
  return `＄${(quota / 500_000).toFixed(6)}`;
}
