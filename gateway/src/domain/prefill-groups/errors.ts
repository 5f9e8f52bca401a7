import { defineErrors } from '../../errors.ts';

export const PREFILL_GROUP_ERRORS = defineErrors({
  PREFILL_GROUP_NAME_REQUIRED: {
    status: 400,
    message: { zh: '组名称和类型不能为空', en: 'A prefill group needs a name and a type' },
  },
  PREFILL_GROUP_TYPE_INVALID: {
    status: 400,
    message: { zh: '组类型只能是 model、tag 或 endpoint', en: 'A prefill group type is model, tag or endpoint' },
  },
  PREFILL_GROUP_ITEMS_INVALID: {
    status: 400,
    message: {
      zh: '模型组和标签组的内容是字符串列表，端点组的内容是 JSON 文本',
      en: 'Model and tag groups hold a list of strings; an endpoint group holds JSON text',
    },
  },
  PREFILL_GROUP_NAME_TAKEN: {
    status: 400,
    message: { zh: '组名称已存在', en: 'A prefill group has this name already' },
  },
  PREFILL_GROUP_ID_REQUIRED: { status: 400, message: { zh: '缺少组 ID', en: 'The prefill group id is missing' } },
  PREFILL_GROUP_NOT_FOUND: { status: 404, message: { zh: '预填组不存在', en: 'Prefill group not found' } },
});
