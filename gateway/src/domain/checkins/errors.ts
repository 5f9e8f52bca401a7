import { defineErrors } from '../../errors.ts';

/** Errors of the daily check-in (new-api's words). */
export const CHECKIN_ERRORS = defineErrors({
  CHECKIN_DISABLED: { status: 400, message: { zh: '签到功能未启用', en: 'Check-in is not enabled' } },
  CHECKIN_ALREADY_DONE: { status: 400, message: { zh: '今日已签到', en: 'You have already checked in today' } },
  CHECKIN_MONTH_INVALID: {
    status: 400,
    message: { zh: '月份格式应为 YYYY-MM', en: 'The month must be written YYYY-MM' },
  },
});
