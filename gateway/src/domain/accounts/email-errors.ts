import { defineErrors } from '../../errors.ts';

/** Errors of mail delivery and the email flows: verification codes, password reset, email bind. */
export const EMAIL_ERRORS = defineErrors({
  EMAIL_REQUIRED: { status: 400, message: { zh: '请输入邮箱地址', en: 'Please enter an email address' } },
  EMAIL_INVALID: { status: 400, message: { zh: '邮箱地址格式不正确', en: 'The email address is not valid' } },
  EMAIL_DOMAIN_NOT_ALLOWED: {
    status: 400,
    message: {
      zh: '管理员启用了邮箱域名白名单，请使用以下域名的邮箱：{domains}',
      en: 'The administrator only allows email addresses at these domains: {domains}',
    },
  },
  EMAIL_ALIAS_NOT_ALLOWED: {
    status: 400,
    message: {
      zh: '管理员已启用邮箱地址别名限制，邮箱地址中不能包含 “+”',
      en: 'The administrator does not allow email aliases: the address must not contain "+"',
    },
  },
  RESET_LINK_INVALID: {
    status: 400,
    message: { zh: '重置链接非法或已过期', en: 'The reset link is invalid or has expired' },
  },
  MAIL_NOT_CONFIGURED: {
    status: 503,
    message: {
      zh: '系统未配置邮件发送（SMTP），请联系管理员',
      en: 'Sending mail is not configured (SMTP), please contact the administrator',
    },
  },
  MAIL_SEND_FAILED: {
    status: 503,
    message: {
      zh: '邮件发送失败，请稍后再试或联系管理员',
      en: 'The email could not be sent, please try again later or contact the administrator',
    },
  },
});
