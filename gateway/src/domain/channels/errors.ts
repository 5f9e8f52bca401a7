import { defineErrors } from '../../errors.ts';

/** Errors of channel management (spec doc 2 §5 "Channel", §8 "Channels"). */
export const CHANNEL_ERRORS = defineErrors({
  CHANNEL_NOT_FOUND: {
    status: 404,
    message: { zh: '渠道未找到，请刷新页面后重试。', en: 'Channel not found, refresh the page and try again.' },
  },
  CHANNEL_NAME_AND_KEY_REQUIRED: {
    status: 400,
    message: { zh: '请填写渠道名称和渠道密钥！', en: 'Fill in the channel name and the channel key!' },
  },
  CHANNEL_NAME_EMPTY: {
    status: 400,
    message: { zh: '渠道名称不能为空！', en: 'The channel name cannot be empty!' },
  },
  CHANNEL_MODELS_REQUIRED: {
    status: 400,
    message: { zh: '请至少选择一个模型！', en: 'Select at least one model!' },
  },
  CHANNEL_MODEL_MAPPING_INVALID: {
    status: 400,
    message: { zh: '模型映射必须是合法的 JSON 格式！', en: 'The model mapping must be valid JSON!' },
  },
  CHANNEL_JSON_FIELD_INVALID: {
    status: 400,
    message: { zh: '{field} 必须是合法的 JSON 对象！', en: '{field} must be a valid JSON object!' },
  },
  CHANNEL_PRIORITY_NOT_INTEGER: {
    status: 400,
    message: { zh: '优先级必须是整数！', en: 'The priority must be an integer!' },
  },
  CHANNEL_WEIGHT_INVALID: {
    status: 400,
    message: { zh: '权重必须是非负整数！', en: 'The weight must be a non-negative integer!' },
  },
  CHANNEL_OTHER_INVALID: {
    status: 400,
    message: { zh: '{type} 的 other 只能是：{choices}', en: 'The other field of {type} must be one of: {choices}' },
  },
  CHANNEL_TYPE_UNKNOWN: {
    status: 400,
    message: { zh: '未知的渠道类型：{type}', en: 'Unknown channel type: {type}' },
  },
  CHANNEL_KEY_INVALID: {
    status: 400,
    message: {
      zh: '渠道{type}的第 {key} 个密钥无效：{problem}',
      en: 'Key {key} of the {type} channel is not valid: {problem}',
    },
  },
  CHANNEL_TYPE_UNSUPPORTED: {
    status: 400,
    message: {
      zh: '渠道{type}暂不支持：{reason_zh}',
      en: 'Channel {type} is not supported yet: {reason_en}',
    },
  },
  CHANNEL_OTHER_REQUIRED: {
    status: 400,
    message: {
      zh: '渠道{type}必须填写{label_zh}（other 字段）',
      en: 'Channel {type} needs its {label_en} in the other field',
    },
  },
  CHANNEL_STATUS_INVALID: {
    status: 400,
    message: {
      zh: '渠道状态只能是 1（启用）、2（禁用）或 3（自动禁用）',
      en: 'The channel status must be 1 (enabled), 2 (disabled) or 3 (auto-disabled)',
    },
  },
  CHANNEL_BASE_URL_INVALID: {
    status: 400,
    message: { zh: '渠道地址必须是 http(s) 地址：{base_url}', en: 'The base URL must be an http(s) URL: {base_url}' },
  },
  CHANNEL_DELETE_SELECTION_EMPTY: {
    status: 400,
    message: { zh: '请先选择要删除的通道！', en: 'Select the channels to delete first!' },
  },
  CHANNEL_TAG_SELECTION_EMPTY: {
    status: 400,
    message: { zh: '请先选择要设置标签的通道！', en: 'Select the channels to tag first!' },
  },
  CHANNEL_TAG_REQUIRED: {
    status: 400,
    message: { zh: '标签不能为空！', en: 'The tag cannot be empty!' },
  },
  CHANNEL_TAG_NOT_FOUND: {
    status: 404,
    message: { zh: '没有渠道使用标签：{tag}', en: 'No channel has the tag: {tag}' },
  },
  CHANNEL_TAG_NOTHING_CHANGED: {
    status: 400,
    message: { zh: '没有任何修改！', en: 'Nothing was changed!' },
  },
  CHANNEL_FETCH_KEY_REQUIRED: {
    status: 400,
    message: { zh: '请填写密钥', en: 'Fill in the key' },
  },
  CHANNEL_FETCH_BASE_URL_REQUIRED: {
    status: 400,
    message: {
      zh: '该渠道类型没有默认地址，请填写渠道地址',
      en: 'This channel type has no default base URL; fill in the base URL',
    },
  },
  CHANNEL_OLLAMA_ONLY: {
    status: 400,
    message: {
      zh: '该操作仅支持 Ollama 渠道（当前为 {type}）',
      en: 'This operation is only supported for Ollama channels (this one is {type})',
    },
  },
  CHANNEL_OLLAMA_MODEL_REQUIRED: {
    status: 400,
    message: { zh: '需要渠道 ID 和模型名称', en: 'Channel ID and model name are required' },
  },
  CHANNEL_FETCH_UNSUPPORTED: {
    status: 400,
    message: {
      zh: '该渠道类型（{type}）不支持获取上游模型列表',
      en: 'This channel type ({type}) cannot list its upstream models',
    },
  },
  CHANNEL_BALANCE_UNSUPPORTED: {
    status: 400,
    message: {
      zh: '该渠道类型（{type}）没有可查询的余额接口',
      en: 'This channel type ({type}) has no balance API to ask',
    },
  },
  CHANNEL_TEST_UNSUPPORTED: {
    status: 400,
    message: {
      zh: '该渠道类型（{type}）不支持测试',
      en: 'Channels of this type ({type}) cannot be tested',
    },
  },
  CHANNEL_TEST_RUNNING: {
    status: 409,
    message: { zh: '渠道测试已在运行中，请稍后再试', en: 'A test of all channels is already running' },
  },
  CHANNEL_TEST_ENDPOINT_INVALID: {
    status: 400,
    message: {
      zh: '未知的测试端点类型 {endpoint}（可用：{allowed}）',
      en: 'Unknown endpoint_type {endpoint} (one of: {allowed})',
    },
  },
  UPSTREAM_UNREACHABLE: {
    status: 502,
    message: { zh: '无法连接上游 {url}：{detail}', en: 'Cannot reach the upstream {url}: {detail}' },
  },
  UPSTREAM_TIMEOUT: {
    status: 502,
    message: {
      zh: '上游 {url} 在 {seconds} 秒内没有响应',
      en: 'The upstream {url} did not answer within {seconds} s',
    },
  },
  UPSTREAM_REFUSED: {
    status: 502,
    message: { zh: '上游返回 HTTP {status}：{detail}', en: 'The upstream answered HTTP {status}: {detail}' },
  },
  UPSTREAM_BALANCE_UNREADABLE: {
    status: 502,
    message: {
      zh: '上游的余额信息无法解析（需要 {expected}）',
      en: 'The upstream balance could not be read (expected {expected})',
    },
  },
  UPSTREAM_MODELS_UNREADABLE: {
    status: 502,
    message: {
      zh: '上游的模型列表无法解析（需要 {expected}）',
      en: 'The upstream model list could not be read (expected {expected})',
    },
  },
});
