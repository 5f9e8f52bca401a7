import { defineErrors } from '../../errors.ts';

/** Errors of API token management (spec doc 2 §5 "Token"; messages as new-api words them). */
export const TOKEN_ERRORS = defineErrors({
  TOKEN_NOT_FOUND: { status: 404, message: { zh: '令牌不存在', en: 'Token not found' } },
  TOKEN_NAME_REQUIRED: { status: 400, message: { zh: '令牌名称不能为空', en: 'The token name is required' } },
  TOKEN_NAME_TOO_LONG: {
    status: 400,
    message: { zh: '令牌名称过长，最多 {max} 个字符', en: 'The token name is too long (at most {max} characters)' },
  },
  TOKEN_QUOTA_NOT_INTEGER: {
    status: 400,
    message: { zh: '额度必须是整数', en: 'The quota must be an integer' },
  },
  TOKEN_QUOTA_NEGATIVE: { status: 400, message: { zh: '额度值不能为负数', en: 'The quota cannot be negative' } },
  TOKEN_QUOTA_TOO_LARGE: {
    status: 400,
    message: {
      zh: '额度值超出有效范围，最大值为 {max}',
      en: 'The quota is out of range; the maximum is {max}',
    },
  },
  TOKEN_COUNT_INVALID: {
    status: 400,
    message: {
      zh: '批量创建数量必须是 1 到 {max} 之间的整数',
      en: 'The number of tokens to create must be an integer from 1 to {max}',
    },
  },
  TOKEN_LIMIT_REACHED: {
    status: 400,
    message: { zh: '已达到最大令牌数量限制 ({max})', en: 'You have reached the maximum number of tokens ({max})' },
  },
  TOKEN_ALLOW_IP_INVALID: {
    status: 400,
    message: {
      zh: 'IP 白名单格式错误：{ip}（每行一个 IP 或 CIDR）',
      en: 'Invalid IP allow-list entry: {ip} (one IP address or CIDR per line)',
    },
  },
  TOKEN_GROUP_UNUSABLE: {
    status: 400,
    message: { zh: '无权使用分组 {group}', en: 'You cannot use the group {group}' },
  },
  TOKEN_STATUS_INVALID: {
    status: 400,
    message: { zh: '令牌状态只能是启用 (1) 或禁用 (2)', en: 'A token can only be enabled (1) or disabled (2)' },
  },
  TOKEN_EXPIRED_CANNOT_ENABLE: {
    status: 400,
    message: {
      zh: '令牌已过期，无法启用，请先修改令牌过期时间，或者设置为永不过期',
      en: 'The token has expired and cannot be enabled; change its expiry time first, or make it never expire',
    },
  },
  TOKEN_EXHAUSTED_CANNOT_ENABLE: {
    status: 400,
    message: {
      zh: '令牌可用额度已用尽，无法启用，请先修改令牌剩余额度，或者设置为无限额度',
      en: 'The token has no quota left and cannot be enabled; raise its remaining quota first, or make it unlimited',
    },
  },
});
