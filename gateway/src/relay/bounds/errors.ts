import { defineErrors } from '../../errors.ts';

/**
 * Refusals of relay input outside its bounds (issue 18): a 400 in the client's error format, before
 * anything is reserved or sent upstream. Codes are stable: clients and tests match on them.
 */
export const BOUND_ERRORS = defineErrors({
  body_too_deep: {
    status: 400,
    message: {
      zh: '请求体的 JSON 嵌套超过 {limit} 层',
      en: 'The JSON body nests deeper than {limit} levels',
    },
  },
  multipart_too_many_parts: {
    status: 400,
    message: { zh: '表单字段和文件超过 {limit} 个', en: 'The form has more than {limit} fields and files' },
  },
  multipart_too_many_files: {
    status: 400,
    message: { zh: '表单文件超过 {limit} 个', en: 'The form has more than {limit} files' },
  },
  multipart_field_too_large: {
    status: 400,
    message: {
      zh: '表单字段 {field} 超过 {limit} 个字符',
      en: 'The form field {field} is longer than {limit} characters',
    },
  },
  max_tokens_out_of_range: {
    status: 400,
    message: {
      zh: '{field} 必须是 0 到 {limit} 之间的整数',
      en: '{field} must be an integer from 0 to {limit}',
    },
  },
  image_count_out_of_range: {
    status: 400,
    message: {
      zh: '模型 {model} 的图片数量 n 必须是 1 到 {limit} 之间的整数',
      en: 'The image count n must be an integer from 1 to {limit} for model {model}',
    },
  },
  invalid_text: {
    status: 400,
    message: {
      zh: '{field} 无效：不能为空、含控制字符或超过 {limit} 个字符',
      en: '{field} is invalid: it must not be empty, hold control characters or exceed {limit} characters',
    },
  },
});
