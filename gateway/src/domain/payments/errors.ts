import { defineErrors } from '../../errors.ts';

export const PAYMENT_ERRORS = defineErrors({
  TOPUP_DISABLED: { status: 400, message: { zh: '管理员未开启在线充值！', en: 'Online top-up is not enabled' } },
  TOPUP_AMOUNT_TOO_SMALL: {
    status: 400,
    message: { zh: '充值数量不能小于 {min}', en: 'The top-up amount cannot be less than {min}' },
  },
  TOPUP_METHOD_INVALID: {
    status: 400,
    message: {
      zh: '支付方式配置错误, 请联系管理员',
      en: 'This payment method is not configured; ask an administrator',
    },
  },
});
