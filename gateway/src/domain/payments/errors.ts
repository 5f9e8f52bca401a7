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
  TOPUP_ORDER_NOT_FOUND: { status: 404, message: { zh: '订单不存在', en: 'Top-up order not found' } },
  TOPUP_ORDER_NOT_PENDING: {
    status: 400,
    message: { zh: '订单状态不是待支付，无法补单', en: 'Only a pending order can be completed' },
  },
});
