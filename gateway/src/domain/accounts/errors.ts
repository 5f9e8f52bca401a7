import { defineErrors } from '../../errors.ts';

/** Errors of sign-up, sign-in, sessions and user management (spec doc 1 §5, §6, §8). */
export const ACCOUNT_ERRORS = defineErrors({
  NOT_LOGGED_IN: {
    status: 401,
    message: { zh: '未登录或登录已过期，请重新登录', en: 'Not logged in or login expired, please log in again' },
  },
  USER_HEADER_MISSING: {
    status: 401,
    message: { zh: '未提供 New-Api-User 请求头', en: 'The New-Api-User header is missing' },
  },
  USER_HEADER_MISMATCH: {
    status: 401,
    message: {
      zh: 'New-Api-User 与当前登录用户不一致',
      en: 'The New-Api-User header does not match the signed-in user',
    },
  },
  ACCESS_TOKEN_INVALID: { status: 401, message: { zh: '访问令牌无效', en: 'The access token is invalid' } },
  USER_BANNED: { status: 403, message: { zh: '用户已被封禁', en: 'This user has been banned' } },
  FORBIDDEN: { status: 403, message: { zh: '无权进行此操作，权限不足', en: 'You do not have permission to do this' } },
  SAME_OR_HIGHER_LEVEL: {
    status: 403,
    message: {
      zh: '无权操作同级或更高等级的用户',
      en: 'You cannot act on users of the same or a higher level',
    },
  },
  CANNOT_PROMOTE_TO_ADMIN: {
    status: 403,
    message: {
      zh: '普通管理员用户无法提升其他用户为管理员',
      en: 'A regular administrator cannot promote users to administrator',
    },
  },
  ROOT_PROTECTED: {
    status: 403,
    message: {
      zh: '无法禁用、删除或降级超级管理员用户',
      en: 'The super administrator cannot be disabled, deleted or demoted',
    },
  },
  CANNOT_CREATE_HIGHER_ROLE: {
    status: 403,
    message: {
      zh: '无法创建权限大于等于自己的用户',
      en: 'You cannot create a user with a role equal to or above your own',
    },
  },
  USER_NOT_FOUND: { status: 404, message: { zh: '用户不存在', en: 'User not found' } },
  USERNAME_AND_PASSWORD_REQUIRED: {
    status: 400,
    message: { zh: '请输入用户名和密码！', en: 'Please enter username and password!' },
  },
  USERNAME_TOO_LONG: {
    status: 400,
    message: { zh: '用户名长度不能超过 {max} 个字符', en: 'The username must be at most {max} characters long' },
  },
  PASSWORD_LENGTH: {
    status: 400,
    message: {
      zh: '密码长度必须在 {min} 到 {max} 个字符之间',
      en: 'The password must be {min} to {max} characters long',
    },
  },
  PASSWORD_MISMATCH: { status: 400, message: { zh: '两次输入的密码不一致', en: 'The two passwords differ' } },
  USERNAME_TAKEN: { status: 409, message: { zh: '用户名已存在', en: 'The username is already taken' } },
  EMAIL_TAKEN: { status: 409, message: { zh: '邮箱地址已被占用', en: 'The email address is already in use' } },
  LOGIN_FAILED: {
    status: 400,
    message: { zh: '用户名或密码错误，或用户已被封禁', en: 'Wrong username or password, or the user is banned' },
  },
  PASSWORD_LOGIN_DISABLED: {
    status: 403,
    message: { zh: '管理员关闭了密码登录', en: 'The administrator has turned off password sign-in' },
  },
  REGISTER_DISABLED: {
    status: 403,
    message: { zh: '管理员关闭了新用户注册', en: 'The administrator has turned off registration' },
  },
  PASSWORD_REGISTER_DISABLED: {
    status: 403,
    message: {
      zh: '管理员关闭了通过密码进行注册，请使用第三方账户验证的形式进行注册',
      en: 'Registration with a password is turned off; register with a third-party account instead',
    },
  },
  EMAIL_AND_CODE_REQUIRED: {
    status: 400,
    message: { zh: '请输入邮箱地址和验证码', en: 'Please enter the email address and the verification code' },
  },
  VERIFICATION_CODE_INVALID: {
    status: 400,
    message: { zh: '验证码错误或已过期', en: 'The verification code is wrong or has expired' },
  },
  INVITE_CODE_INVALID: { status: 400, message: { zh: '邀请码无效', en: 'The invitation code is invalid' } },
  ORIGINAL_PASSWORD_REQUIRED: {
    status: 400,
    message: { zh: '请输入原密码', en: 'Please enter the original password' },
  },
  ORIGINAL_PASSWORD_WRONG: { status: 400, message: { zh: '原密码错误', en: 'The original password is wrong' } },
  PASSWORD_UNCHANGED: {
    status: 400,
    message: { zh: '新密码不能与原密码相同', en: 'The new password must differ from the original' },
  },
  DELETE_CONFIRMATION_MISMATCH: {
    status: 400,
    message: { zh: '请输入你的账户名以确认删除', en: 'Enter your account name to confirm deletion' },
  },
  QUOTA_NOT_INTEGER: { status: 400, message: { zh: '额度必须是整数', en: 'Quota must be an integer' } },
  INVALID_ACTION: { status: 400, message: { zh: '无效的操作', en: 'Invalid action' } },
  TRANSFER_TOO_SMALL: {
    status: 400,
    message: { zh: '转移额度最小为 {min}', en: 'The minimum transfer amount is {min}' },
  },
  TRANSFER_EXCEEDS_BALANCE: {
    status: 400,
    message: { zh: '邀请额度不足', en: 'The amount exceeds your affiliate earnings' },
  },
  SETTING_INVALID: {
    status: 400,
    message: { zh: '通知设置无效：{detail}', en: 'Invalid notification settings: {detail}' },
  },
  TURNSTILE_REQUIRED: {
    status: 400,
    message: {
      zh: '请稍后几秒重试，Turnstile 正在检查用户环境！',
      en: 'Please retry in a few seconds, checking your environment',
    },
  },
  TURNSTILE_FAILED: {
    status: 403,
    message: { zh: 'Turnstile 校验失败，请刷新重试！', en: 'Human check failed, please refresh and retry' },
  },
  RATE_LIMITED: {
    status: 429,
    message: { zh: '请求过于频繁，请稍后再试', en: 'Too many requests, please try again later' },
  },
});
