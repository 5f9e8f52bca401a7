import { defineErrors } from '../../../errors.ts';

/** Refusals of passkey registration, sign-in, step-up verification and removal. */
export const PASSKEY_ERRORS = defineErrors({
  passkey_disabled: {
    status: 400,
    message: { zh: '管理员未启用 Passkey 登录', en: 'Passkey sign-in is not enabled by the administrator' },
  },
  passkey_not_registered: {
    status: 400,
    message: { zh: '该用户尚未绑定 Passkey', en: 'No passkey is registered for this user' },
  },
  passkey_https_required: {
    status: 400,
    message: {
      zh: 'Passkey 需要 HTTPS 访问（{origin}），或由管理员允许不安全的来源',
      en: 'Passkeys need HTTPS ({origin}), unless the administrator allows insecure origins',
    },
  },
  passkey_challenge_invalid: {
    status: 400,
    message: {
      zh: 'Passkey 验证已过期或已使用，请重试',
      en: 'The passkey request expired or was already used, try again',
    },
  },
  passkey_response_invalid: {
    status: 400,
    message: { zh: 'Passkey 验证失败：{reason}', en: 'Passkey verification failed: {reason}' },
  },
  passkey_unknown_credential: {
    status: 400,
    message: { zh: '未找到 Passkey 凭证', en: 'This passkey is not registered here' },
  },
  passkey_counter_regressed: {
    status: 400,
    message: {
      zh: 'Passkey 签名计数器回退，该认证器可能已被复制',
      en: "The passkey's signature counter went backwards: the authenticator may have been cloned",
    },
  },
  passkey_in_use: {
    status: 400,
    message: { zh: '该 Passkey 已绑定其他账户', en: 'This passkey is registered to another account' },
  },
  passkey_last_sign_in_method: {
    status: 400,
    message: {
      zh: 'Passkey 是该账户唯一的登录方式，请先设置密码或绑定其他登录方式',
      en: 'The passkey is the only way to sign in to this account: set a password or bind another sign-in first',
    },
  },
  passkey_not_verified: {
    status: 400,
    message: {
      zh: '请先完成 Passkey 验证',
      en: 'Complete the passkey verification first',
    },
  },
});
