import { defineErrors } from '../../errors.ts';

/** Errors of the model catalogue (models, vendors, upstream sync); messages as new-api words them. */
export const CATALOGUE_ERRORS = defineErrors({
  MODEL_NOT_FOUND: { status: 404, message: { zh: '模型不存在', en: 'Model not found' } },
  MODEL_ID_REQUIRED: { status: 400, message: { zh: '缺少模型 ID', en: 'The model id is missing' } },
  MODEL_NAME_REQUIRED: { status: 400, message: { zh: '模型名称不能为空', en: 'The model name is required' } },
  MODEL_NAME_TAKEN: { status: 400, message: { zh: '模型名称已存在', en: 'A model with this name already exists' } },
  MODEL_ENDPOINTS_INVALID: {
    status: 400,
    message: {
      zh: '端点必须是 JSON 数组或对象文本',
      en: 'The endpoints must be the text of a JSON array or object',
    },
  },
  MODEL_VENDOR_UNKNOWN: { status: 400, message: { zh: '供应商 {id} 不存在', en: 'Vendor {id} does not exist' } },
  VENDOR_NOT_FOUND: { status: 404, message: { zh: '供应商不存在', en: 'Vendor not found' } },
  VENDOR_ID_REQUIRED: { status: 400, message: { zh: '缺少供应商 ID', en: 'The vendor id is missing' } },
  VENDOR_NAME_REQUIRED: { status: 400, message: { zh: '供应商名称不能为空', en: 'The vendor name is required' } },
  VENDOR_NAME_TAKEN: {
    status: 400,
    message: { zh: '供应商名称已存在', en: 'A vendor with this name already exists' },
  },
  CATALOGUE_URL_NOT_SET: {
    status: 400,
    message: {
      zh: '未设置上游模型目录地址（ModelCatalogueUpstreamURL）',
      en: 'No upstream catalogue URL is set (ModelCatalogueUpstreamURL)',
    },
  },
  CATALOGUE_FETCH_FAILED: {
    status: 502,
    message: { zh: '获取上游模型目录失败：{reason}', en: 'Fetching the upstream catalogue failed: {reason}' },
  },
  CATALOGUE_TOO_LARGE: {
    status: 502,
    message: {
      zh: '上游模型目录超过 {max} 字节',
      en: 'The upstream catalogue is larger than {max} bytes',
    },
  },
  CATALOGUE_INVALID_JSON: {
    status: 502,
    message: { zh: '上游模型目录不是有效的 JSON', en: 'The upstream catalogue is not valid JSON' },
  },
  CATALOGUE_INVALID: {
    status: 502,
    message: { zh: '上游模型目录格式错误：{reason}', en: 'The upstream catalogue is malformed: {reason}' },
  },
});
