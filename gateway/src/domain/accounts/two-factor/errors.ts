import { defineErrors } from '../../../errors.ts';

/** Refusals of two-factor sign-in, its settings and step-up verification. */
export const TWO_FACTOR_ERRORS = defineErrors({
  two_factor_already_enabled: {
    status: 400,
    message: { zh: '用户已启用2FA，请先禁用后重新设置', en: 'Two-factor sign-in is already enabled; disable it first' },
  },
  two_factor_not_set_up: {
    status: 400,
    message: { zh: '请先完成2FA初始化设置', en: 'Start the two-factor setup first' },
  },
  two_factor_not_enabled: {
    status: 400,
    message: { zh: '用户未启用2FA', en: 'Two-factor sign-in is not enabled' },
  },
  two_factor_code_required: {
    status: 400,
    message: { zh: '请输入验证码', en: 'Enter a verification code' },
  },
  two_factor_code_invalid: {
    status: 400,
    message: { zh: '验证码或备用码错误，请重试', en: 'Wrong verification or backup code, try again' },
  },
  two_factor_locked: {
    status: 429,
    message: {
      zh: '验证失败次数过多，请 {seconds} 秒后重试',
      en: 'Too many wrong codes, try again in {seconds} seconds',
    },
  },
  two_factor_challenge_expired: {
    status: 400,
    message: { zh: '会话已过期，请重新登录', en: 'The sign-in has expired, sign in again' },
  },
  two_factor_required: {
    status: 403,
    message: {
      zh: '管理员必须先启用两步验证',
      en: 'Administrators must enable two-factor sign-in first',
    },
  },
  verification_required: {
    status: 403,
    message: {
      zh: '此操作需要安全验证，请先输入两步验证码',
      en: 'This action needs a fresh verification: enter your two-factor code first',
    },
  },
  verification_method_unsupported: {
    status: 400,
    message: { zh: '不支持的验证方式', en: 'Unsupported verification method' },
  },
});
