import { AppError, type ErrorSpec } from '../../../errors.ts';
import type { AccountKind } from '../../../store/repositories/quota-leases.ts';
import type { PeriodKind } from './calendar.ts';

const HOLDER = { token: { zh: '令牌', en: 'token' }, user: { zh: '用户', en: 'user' } } as const;
const PERIOD = {
  daily: { zh: '每日', en: 'daily' },
  weekly: { zh: '每周', en: 'weekly' },
  monthly: { zh: '每月', en: 'monthly' },
} as const;
const LIMIT = { quota: { zh: '额度', en: 'quota' }, requests: { zh: '请求次数', en: 'request' } } as const;

/**
 * A request refused because a period budget is used up: HTTP 429 with `Retry-After` until the period
 * ends (the refusal passes by itself then, unlike an empty wallet's 403), code `period_quota_exceeded`.
 */
export class PeriodQuotaExceeded extends AppError {
  readonly retryAfterSeconds: number;

  constructor(holder: AccountKind, period: PeriodKind, limit: 'quota' | 'requests', resetsInSeconds: number) {
    const spec: ErrorSpec = {
      code: 'period_quota_exceeded',
      status: 429,
      message: {
        zh: `${HOLDER[holder].zh}的${PERIOD[period].zh}${LIMIT[limit].zh}上限已用尽，{seconds} 秒后重置`,
        en: `The ${holder}'s ${PERIOD[period].en} ${LIMIT[limit].en} limit is used up; it resets in {seconds} s`,
      },
    };
    super(spec, { seconds: resetsInSeconds });
    this.retryAfterSeconds = resetsInSeconds;
  }
}
