import { defineErrors } from '../../errors.ts';

/** Every error the options area can show a user. Codes are stable: clients and tests match on them. */
export const optionErrors = defineErrors({
  OPTION_UNKNOWN: {
    status: 400,
    message: { zh: '未知的配置项：{key}', en: 'Unknown option: {key}' },
  },
  OPTION_NOT_BOOLEAN: {
    status: 400,
    message: { zh: '{key} 的值必须是 true 或 false', en: '{key} must be true or false' },
  },
  OPTION_NOT_INTEGER: {
    status: 400,
    message: { zh: '{key} 的值必须是整数', en: '{key} must be an integer' },
  },
  OPTION_NOT_NUMBER: {
    status: 400,
    message: { zh: '{key} 的值必须是数字', en: '{key} must be a number' },
  },
  OPTION_TOO_SMALL: {
    status: 400,
    message: { zh: '{key} 不能小于 {min}', en: '{key} must be at least {min}' },
  },
  OPTION_NOT_ABOVE: {
    status: 400,
    message: { zh: '{key} 必须大于 {bound}', en: '{key} must be greater than {bound}' },
  },
  OPTION_TOO_LARGE: {
    status: 400,
    message: { zh: '{key} 不能大于 {max}', en: '{key} must be at most {max}' },
  },
  OPTION_INVALID_CHOICE: {
    status: 400,
    message: { zh: '{key} 必须是以下之一：{choices}', en: '{key} must be one of: {choices}' },
  },
  OPTION_INVALID_URL: {
    status: 400,
    message: {
      zh: '{key} 必须是以 http:// 或 https:// 开头的网址',
      en: '{key} must be a URL starting with http:// or https://',
    },
  },
  OPTION_INVALID_ORIGIN: {
    status: 400,
    message: {
      zh: '{key} 中的 "{item}" 无效，应为逗号分隔的来源，例如 https://example.com 或 https://example.com:8443',
      en: '{key}: "{item}" is invalid; use comma-separated origins such as https://example.com or https://example.com:8443',
    },
  },
  OPTION_INVALID_DOMAIN: {
    status: 400,
    message: {
      zh: '{key} 必须是不含协议和端口的域名，例如 example.com',
      en: '{key} must be a host name without scheme or port, such as example.com',
    },
  },
  OPTION_INVALID_STATUS_CODE_RANGES: {
    status: 400,
    message: {
      zh: '{key} 中的状态码范围 "{item}" 无效，格式如 401,500-503，状态码须在 100 到 599 之间',
      en: '{key}: invalid status code range "{item}"; use a list like 401,500-503 with codes from 100 to 599',
    },
  },
  // The zh text is the console's own wording (spec doc 2 §5); keep it exact.
  OPTION_INVALID_JSON: {
    status: 400,
    message: { zh: '不是合法的 JSON 字符串', en: 'not a valid JSON string' },
  },
  OPTION_INVALID_SHAPE: {
    status: 400,
    message: {
      zh: '{key} 格式不正确：{path} 应为{expectedZh}',
      en: '{key} has the wrong shape: {path} must be {expectedEn}',
    },
  },
  OPTION_INVALID_RULES: {
    status: 400,
    message: {
      zh: '{key} 无效：{detailZh}',
      en: '{key} is invalid: {detailEn}',
    },
  },
  OPTION_INVALID_ENTRY: {
    status: 400,
    message: {
      zh: '{key} 中的 "{item}" 无效，应为 {expectedZh}',
      en: '{key}: "{item}" is invalid; each entry must be {expectedEn}',
    },
  },
  OPTION_INVALID_TIME_ZONE: {
    status: 400,
    message: {
      zh: '{key} 的时区 "{zone}" 无效，应为 IANA 时区名，例如 UTC 或 Asia/Shanghai',
      en: '{key}: "{zone}" is not a time zone; use an IANA name such as UTC or Asia/Shanghai',
    },
  },
  OPTION_INVALID_BILLING_EXPR: {
    status: 400,
    message: {
      zh: '{key} 中模型 {model} 的计费表达式第 {position} 个字符处有误：{reasonZh}',
      en: '{key}: the billing expression of {model} is invalid at position {position}: {reasonEn}',
    },
  },
  OPTION_MANAGED: {
    status: 409,
    message: {
      zh: '配置项 {key} 由 Kubernetes 资源 {resource} 管理，请修改该资源',
      en: 'Option {key} is managed by the Kubernetes resource {resource}; edit that resource instead',
    },
  },
});
