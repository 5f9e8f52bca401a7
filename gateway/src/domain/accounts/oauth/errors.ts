import { AppError, defineErrors } from '../../../errors.ts';

/**
 * Errors of third-party sign-in and binding (spec doc 1 §2 OAuth callback screen, §4 binding flows).
 * `{provider}` is the provider's display name. Failures of the provider itself are 502s with a code
 * of their own, so the console can tell "try again later" from "your link is stale".
 */
export const OAUTH_ERRORS = defineErrors({
  OAUTH_PROVIDER_DISABLED: {
    status: 403,
    message: {
      zh: '管理员未开启通过 {provider} 登录以及注册',
      en: 'The administrator has not enabled sign-in with {provider}',
    },
  },
  OAUTH_NOT_CONFIGURED: {
    status: 503,
    message: {
      zh: '{provider} 登录配置不完整，请联系管理员',
      en: 'Sign-in with {provider} is not fully configured; please contact the administrator',
    },
  },
  OAUTH_PROVIDER_UNKNOWN: {
    status: 404,
    message: { zh: '未知的登录方式：{provider}', en: 'Unknown sign-in provider: {provider}' },
  },
  OAUTH_STATE_INVALID: {
    status: 403,
    message: {
      zh: 'state 为空、已过期或已被使用，请重新登录',
      en: 'The sign-in state is missing, expired or already used; please start again',
    },
  },
  OAUTH_CODE_MISSING: { status: 400, message: { zh: '无效的参数：缺少 code', en: 'Invalid request: code is missing' } },
  OAUTH_CODE_REJECTED: {
    status: 400,
    message: {
      zh: '{provider} 拒绝了授权码，它可能已过期，请重新登录',
      en: '{provider} refused the authorization code (it may have expired); please start again',
    },
  },
  OAUTH_CLIENT_REJECTED: {
    status: 502,
    message: {
      zh: '{provider} 拒绝了本站的客户端凭据，请联系管理员检查配置',
      en: "{provider} refused this site's client credentials; please ask the administrator to check them",
    },
  },
  OAUTH_PROVIDER_UNAVAILABLE: {
    status: 502,
    message: {
      zh: '无法连接至 {provider} 服务器，请稍后重试！',
      en: 'Cannot reach {provider}, please try again later',
    },
  },
  OAUTH_PROVIDER_BAD_RESPONSE: {
    status: 502,
    message: {
      zh: '{provider} 返回值非法，请稍后重试！',
      en: '{provider} answered something unexpected, please try again later',
    },
  },
  OAUTH_TRUST_LEVEL_TOO_LOW: {
    status: 403,
    message: {
      zh: '{provider} 用户信任等级不足（需要 {minimum}，当前 {actual}）',
      en: 'Your {provider} trust level is too low (needs {minimum}, yours is {actual})',
    },
  },
  OAUTH_ALREADY_BOUND: {
    status: 409,
    message: {
      zh: '该 {provider} 账户已被绑定',
      en: 'This {provider} account is already bound to another user',
    },
  },
  OAUTH_ACCOUNT_DEREGISTERED: {
    status: 403,
    message: {
      zh: '该 {provider} 账户对应的用户已注销',
      en: 'The user of this {provider} account has been deregistered',
    },
  },
  OAUTH_BUSY: {
    status: 409,
    message: {
      zh: '该 {provider} 账户正在另一处登录，请稍后重试',
      en: 'This {provider} account is signing in elsewhere right now; please retry',
    },
  },
  WECHAT_CODE_INVALID: {
    status: 400,
    message: { zh: '微信验证码错误或已过期', en: 'The WeChat verification code is wrong or has expired' },
  },
  TELEGRAM_SIGNATURE_INVALID: {
    status: 400,
    message: { zh: '无效的 Telegram 登录数据', en: 'The Telegram sign-in data is not authentic' },
  },
  TELEGRAM_AUTH_EXPIRED: {
    status: 400,
    message: {
      zh: 'Telegram 登录数据已过期，请重新登录',
      en: 'The Telegram sign-in data is too old; please sign in again',
    },
  },
});

/** Errors of administering custom OAuth providers (/api/custom-oauth-provider). */
export const CUSTOM_OAUTH_ERRORS = defineErrors({
  CUSTOM_OAUTH_NOT_FOUND: {
    status: 404,
    message: { zh: '未找到该 OAuth 提供商', en: 'No such OAuth provider' },
  },
  CUSTOM_OAUTH_FIELD_INVALID: {
    status: 400,
    message: { zh: '字段 {field} 无效：{rule}', en: 'The field {field} is invalid: {rule}' },
  },
  CUSTOM_OAUTH_SLUG_TAKEN: {
    status: 409,
    message: { zh: '该 Slug 已被使用', en: 'This slug is already used by another provider' },
  },
  CUSTOM_OAUTH_SLUG_RESERVED: {
    status: 400,
    message: {
      zh: '该 Slug 与内置 OAuth 提供商或固定路径冲突：{slug}',
      en: 'The slug {slug} clashes with a built-in provider or a fixed route',
    },
  },
  CUSTOM_OAUTH_IN_USE: {
    status: 409,
    message: {
      zh: '该 OAuth 提供商还有 {count} 个用户绑定，无法删除。请先解除所有用户绑定，或将其停用。',
      en: '{count} users are bound to this provider, so it cannot be deleted; unbind them first, or disable it',
    },
  },
  CUSTOM_OAUTH_DISCOVERY_URL_INVALID: {
    status: 400,
    message: {
      zh: '请填写有效的 Discovery URL 或 Issuer URL（仅支持 http/https）',
      en: 'Give a valid discovery or issuer URL (http or https only)',
    },
  },
  CUSTOM_OAUTH_DISCOVERY_FAILED: {
    status: 502,
    message: {
      zh: '获取 Discovery 配置失败：{reason}',
      en: 'Could not read the discovery document: {reason}',
    },
  },
});

/** A provider may be used only when switched on and its settings are all filled in. */
export function assertProviderReady(provider: string, enabled: boolean, settings: readonly unknown[]): void {
  if (!enabled) throw new AppError(OAUTH_ERRORS.OAUTH_PROVIDER_DISABLED, { provider });
  if (settings.some((value) => !value)) throw new AppError(OAUTH_ERRORS.OAUTH_NOT_CONFIGURED, { provider });
}
