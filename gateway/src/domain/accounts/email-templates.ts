import type { Language } from '../../errors.ts';
import type { MailMessage } from './mailer.ts';

/** The mails of the account flows, in the language the visitor used. */

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

export function verificationMail(
  language: Language,
  to: string,
  m: { systemName: string; code: string; minutes: number },
): MailMessage {
  const name = escapeHtml(m.systemName);
  if (language === 'en') {
    return {
      to,
      subject: `${m.systemName} email verification`,
      text: `Hello, you are verifying your email address for ${m.systemName}.\nYour verification code is: ${m.code}\nIt is valid for ${m.minutes} minutes. If this was not you, please ignore this mail.`,
      html: `<p>Hello, you are verifying your email address for ${name}.</p><p>Your verification code is: <strong>${m.code}</strong></p><p>It is valid for ${m.minutes} minutes. If this was not you, please ignore this mail.</p>`,
    };
  }
  return {
    to,
    subject: `${m.systemName} 邮箱验证邮件`,
    text: `您好，你正在进行 ${m.systemName} 邮箱验证。\n您的验证码为：${m.code}\n验证码 ${m.minutes} 分钟内有效，如果不是本人操作，请忽略。`,
    html: `<p>您好，你正在进行 ${name} 邮箱验证。</p><p>您的验证码为：<strong>${m.code}</strong></p><p>验证码 ${m.minutes} 分钟内有效，如果不是本人操作，请忽略。</p>`,
  };
}

export function resetMail(
  language: Language,
  to: string,
  m: { systemName: string; link: string; minutes: number },
): MailMessage {
  const name = escapeHtml(m.systemName);
  const link = escapeHtml(m.link);
  if (language === 'en') {
    return {
      to,
      subject: `${m.systemName} password reset`,
      text: `Hello, you asked to reset your ${m.systemName} password.\nOpen this link to reset it: ${m.link}\nThe link is valid for ${m.minutes} minutes. If this was not you, please ignore this mail.`,
      html: `<p>Hello, you asked to reset your ${name} password.</p><p><a href="${link}">Click here to reset your password</a>, or open this link: ${link}</p><p>The link is valid for ${m.minutes} minutes. If this was not you, please ignore this mail.</p>`,
    };
  }
  return {
    to,
    subject: `${m.systemName} 密码重置`,
    text: `您好，你正在进行 ${m.systemName} 密码重置。\n请打开以下链接重置密码：${m.link}\n重置链接 ${m.minutes} 分钟内有效，如果不是本人操作，请忽略。`,
    html: `<p>您好，你正在进行 ${name} 密码重置。</p><p><a href="${link}">点击此处</a>进行密码重置，或打开以下链接：${link}</p><p>重置链接 ${m.minutes} 分钟内有效，如果不是本人操作，请忽略。</p>`,
  };
}
