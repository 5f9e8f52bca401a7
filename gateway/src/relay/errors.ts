import { defineErrors } from '../errors.ts';

/**
 * Errors of the relay, answered in OpenAI's error shape (or the client format's). Codes follow
 * new-api's where it has one (reference §3.2, §12), so clients that match on them keep working.
 */
export const RELAY_ERRORS = defineErrors({
  invalid_token: { status: 401, message: { zh: '无效的令牌', en: 'Invalid token' } },
  token_expired: { status: 401, message: { zh: '该令牌已过期', en: 'The token has expired' } },
  token_disabled: { status: 401, message: { zh: '该令牌状态不可用', en: 'The token is disabled' } },
  access_denied: {
    status: 403,
    message: { zh: '您的 IP 不在令牌允许访问的列表中', en: 'Your IP address is not allowed to use this token' },
  },
  user_banned: { status: 403, message: { zh: '用户已被封禁', en: 'The user is banned' } },
  group_not_usable: { status: 403, message: { zh: '无权访问 {group} 分组', en: 'No access to group {group}' } },
  channel_pin_forbidden: {
    status: 403,
    message: { zh: '普通用户不支持指定渠道', en: 'Normal users cannot pin a channel' },
  },
  channel_pin_invalid: { status: 400, message: { zh: '无效的渠道 Id', en: 'Invalid channel id' } },
  channel_pin_disabled: { status: 403, message: { zh: '该渠道已被禁用', en: 'The channel is disabled' } },
  model_required: { status: 400, message: { zh: '未指定模型名称', en: 'The model name is required' } },
  model_not_allowed: {
    status: 403,
    message: { zh: '该令牌无权访问模型 {model}', en: 'This token has no access to model {model}' },
  },
  model_not_found: {
    status: 503,
    message: {
      zh: '分组 {group} 下模型 {model} 无可用渠道',
      en: 'No available channel for model {model} in group {group}',
    },
  },
  invalid_request: { status: 400, message: { zh: '请求无效：{detail}', en: 'Invalid request: {detail}' } },
  rate_limited: {
    status: 429,
    message: {
      zh: '您已达到请求数限制：{minutes} 分钟内最多请求 {count} 次',
      en: 'Request limit reached: at most {count} requests in {minutes} minutes',
    },
  },
  rate_limit_exceeded: {
    status: 429,
    message: {
      zh: '已达到每分钟请求数限制：{scopeZh}对 {modelZh} 每分钟最多 {limit} 次请求',
      en: 'Rate limit reached: the {scope} allows at most {limit} requests per minute for {model}',
    },
  },
  tpm_limit_exceeded: {
    status: 429,
    message: {
      zh: '已达到每分钟 token 数限制：{scopeZh}对 {modelZh} 每分钟最多 {limit} 个 token',
      en: 'Token rate limit reached: the {scope} allows at most {limit} tokens per minute for {model}',
    },
  },
  format_unsupported: {
    status: 400,
    message: {
      zh: '渠道 {channel} 无法处理 {format} 格式的请求',
      en: 'Channel {channel} cannot serve a {format} request',
    },
  },
  websocket_unsupported: {
    status: 426,
    message: {
      zh: '本网关仅通过 HTTP 提供 Responses API，请使用 POST /v1/responses',
      en: 'This gateway serves the Responses API over HTTP only: use POST /v1/responses',
    },
  },
  websocket_required: {
    status: 426,
    message: {
      zh: '该接口需要 WebSocket 连接',
      en: 'This endpoint takes a WebSocket connection (Upgrade: websocket)',
    },
  },
  api_not_implemented: { status: 501, message: { zh: '该接口尚未实现', en: 'This API is not implemented' } },
  upstream_error: { status: 502, message: { zh: '上游错误：{detail}', en: 'Upstream error: {detail}' } },
  upstream_unreachable: {
    status: 502,
    message: { zh: '无法连接上游：{detail}', en: 'The upstream could not be reached: {detail}' },
  },
});
