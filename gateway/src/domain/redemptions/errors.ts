import { defineErrors } from '../../errors.ts';

/** Errors of redemption codes and redeeming them (spec doc 2 §5 "Redemption", "Wallet"; new-api's words). */
export const REDEMPTION_ERRORS = defineErrors({
  REDEMPTION_NOT_FOUND: { status: 404, message: { zh: '兑换码不存在', en: 'Redemption code not found' } },
  REDEMPTION_NAME_LENGTH: {
    status: 400,
    message: {
      zh: '兑换码名称长度必须在1-{max}之间',
      en: 'The redemption code name must be 1 to {max} characters long',
    },
  },
  REDEMPTION_COUNT_NOT_POSITIVE: {
    status: 400,
    message: { zh: '兑换码个数必须大于0', en: 'The number of codes must be greater than 0' },
  },
  REDEMPTION_COUNT_TOO_LARGE: {
    status: 400,
    message: {
      zh: '一次兑换码批量生成的个数不能大于 {max}',
      en: 'At most {max} codes can be generated at once',
    },
  },
  REDEMPTION_QUOTA_INVALID: {
    status: 400,
    message: { zh: '兑换码额度必须是大于 0 的整数', en: 'The quota of a code must be an integer greater than 0' },
  },
  REDEMPTION_QUOTA_TOO_LARGE: {
    status: 400,
    message: { zh: '额度值超出有效范围，最大值为 {max}', en: 'The quota is out of range; the maximum is {max}' },
  },
  REDEMPTION_NOT_EDITABLE: {
    status: 400,
    message: { zh: '只有未使用的兑换码可以编辑', en: 'Only unused codes can be edited' },
  },
  REDEMPTION_STATUS_INVALID: {
    status: 400,
    message: { zh: '兑换码状态只能是启用 (1) 或禁用 (2)', en: 'A code can only be enabled (1) or disabled (2)' },
  },
  REDEMPTION_USED_CANNOT_ENABLE: {
    status: 400,
    message: { zh: '兑换码已被使用，无法启用', en: 'The code has been used and cannot be enabled' },
  },
  REDEMPTION_USED_CANNOT_DISABLE: {
    status: 400,
    message: { zh: '兑换码已被使用，无法禁用', en: 'The code has been used and cannot be disabled' },
  },
  REDEEM_KEY_REQUIRED: { status: 400, message: { zh: '请输入兑换码！', en: 'Please enter a redemption code!' } },
  REDEEM_KEY_INVALID: { status: 400, message: { zh: '无效的兑换码', en: 'Invalid redemption code' } },
  REDEEM_KEY_USED: { status: 400, message: { zh: '该兑换码已被使用', en: 'This code has already been used' } },
  REDEEM_KEY_DISABLED: { status: 400, message: { zh: '该兑换码已被禁用', en: 'This code has been disabled' } },
  REDEEM_KEY_EXPIRED: { status: 400, message: { zh: '该兑换码已过期', en: 'This code has expired' } },
});
