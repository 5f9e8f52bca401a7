import { AppError, defineErrors, type ErrorParams, type ErrorSpec } from '../../errors.ts';

/**
 * Errors raised while routing a request to a channel and preparing the upstream call. Codes are
 * new-api's (reference §4.3, §4.6): `channel:*` codes mark a problem of the channel's own
 * configuration, so the retry decision sends the request to another channel.
 */
export const ROUTING_ERRORS = defineErrors({
  'channel:model_mapped_error': {
    status: 500,
    message: {
      zh: '渠道模型映射存在循环：{chain}',
      en: 'The channel model mapping contains a cycle: {chain}',
    },
  },
  // The channel cannot serve (a stored row of a type Tollgate does not speak), as when none is available.
  'channel:type_unsupported': {
    status: 503,
    message: {
      zh: '渠道{type}暂不支持：{reason_zh}',
      en: 'Channel {type} is not supported yet: {reason_en}',
    },
  },
  // A stored channel lacks what its type cannot work without (Cloudflare's account id in `other`).
  'channel:other_required': {
    status: 503,
    message: {
      zh: '渠道{type}缺少{field}（渠道的 other 字段）',
      en: "Channel {type} has no {field} (the channel's other field)",
    },
  },
  // The channel's `other` does not say what its type needs (Dify's app kind).
  'channel:other_invalid': {
    status: 503,
    message: {
      zh: '渠道{type}的 other 设置无效：{detail}',
      en: 'The other setting of channel {type} is invalid: {detail}',
    },
  },
  'channel:no_available_key': {
    status: 503,
    message: { zh: '渠道 #{channel} 没有可用的密钥', en: 'Channel #{channel} has no enabled key' },
  },
  'channel:param_override_invalid': {
    status: 500,
    message: {
      zh: '渠道参数覆盖配置无效：{detail}',
      en: 'The channel param_override is invalid: {detail}',
    },
  },
  'channel:header_override_invalid': {
    status: 500,
    message: {
      zh: '渠道请求头覆盖配置无效：{detail}',
      en: 'The channel header_override is invalid: {detail}',
    },
  },
});

/**
 * An error of the relay rules, with what an OpenAI-shaped answer and the retry decision need on
 * top of an AppError: the OpenAI error `type` and whether a retry on another channel is pointless.
 */
export class RelayRuleError extends AppError {
  override name = 'RelayRuleError';
  readonly type: string;
  readonly skipRetry: boolean;

  constructor(spec: ErrorSpec, params: ErrorParams, type: string, skipRetry: boolean) {
    super(spec, params);
    this.type = type;
    this.skipRetry = skipRetry;
  }
}

/** Errors of the channel's configuration: new-api's `new_api_error` type, skip-retry (but `channel:*`). */
export function channelRuleError(
  code: keyof typeof ROUTING_ERRORS,
  params: ErrorParams,
  skipRetry = true,
): RelayRuleError {
  return new RelayRuleError(ROUTING_ERRORS[code], params, 'new_api_error', skipRetry);
}
