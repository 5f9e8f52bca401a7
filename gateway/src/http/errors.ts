import type { FastifyError, FastifyRequest } from 'fastify';
import { AppError, defineErrors, type Language } from '../errors.ts';
import { INT4_MAX } from './validation.ts';

/** Errors raised by the HTTP layer itself, before any domain code runs. */
export const HTTP_ERRORS = defineErrors({
  INVALID_JSON: { status: 400, message: { zh: '请求体不是合法的 JSON', en: 'The request body is not valid JSON' } },
  EMPTY_BODY: { status: 400, message: { zh: '请求体不能为空', en: 'The request body is empty' } },
  INVALID_REQUEST: { status: 400, message: { zh: '请求参数错误：{detail}', en: 'Invalid request: {detail}' } },
  NUMBER_OUT_OF_RANGE: {
    status: 400,
    message: { zh: '数值超出范围：{detail}', en: 'Number out of range: {detail}' },
  },
  BODY_TOO_LARGE: { status: 413, message: { zh: '请求体过大', en: 'The request body is too large' } },
  SERVER_DRAINING: {
    status: 503,
    message: { zh: '服务正在关闭，请重试', en: 'This server is shutting down; retry the request' },
  },
  SCHEMA_NOT_READY: {
    status: 503,
    message: {
      zh: '数据库结构尚未升级到本网关需要的版本，请等待迁移任务完成后重试',
      en: 'The database schema is older than this gateway needs; retry once the migration job has run',
    },
  },
  UNSUPPORTED_CONTENT_ENCODING: {
    status: 415,
    message: {
      zh: '不支持的请求体压缩格式：{encoding}（支持 gzip、deflate、br、zstd）',
      en: 'Unsupported Content-Encoding: {encoding} (gzip, deflate, br and zstd are accepted)',
    },
  },
  BAD_CONTENT_ENCODING: {
    status: 400,
    message: {
      zh: '请求体无法按 {encoding} 解压',
      en: 'The request body could not be decompressed as {encoding}',
    },
  },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    message: { zh: '不支持的请求内容类型', en: 'Unsupported content type; send application/json' },
  },
  NOT_FOUND: { status: 404, message: { zh: '接口不存在：{method} {path}', en: 'No such endpoint: {method} {path}' } },
  SHUTTING_DOWN: { status: 503, message: { zh: '服务正在关闭', en: 'The server is shutting down' } },
  INTERNAL_ERROR: {
    status: 500,
    message: { zh: '服务器内部错误，请联系管理员', en: 'Internal server error, please contact the administrator' },
  },
});

const FASTIFY_CODES: Record<string, keyof typeof HTTP_ERRORS> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'INVALID_JSON',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'EMPTY_BODY',
  FST_ERR_CTP_BODY_TOO_LARGE: 'BODY_TOO_LARGE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'INVALID_JSON',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
};

const RANGE_KEYWORDS = new Set(['maximum', 'minimum', 'exclusiveMaximum', 'exclusiveMinimum']);

/** Maps anything thrown while handling a request to an AppError; unknown errors become INTERNAL_ERROR. */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  const fastifyError = error as Partial<FastifyError>;
  if (fastifyError.validation) {
    const first = fastifyError.validation[0];
    const detail = `${fastifyError.validationContext ?? 'request'}${first?.instancePath ?? ''} ${first?.message ?? ''}`;
    // Past the ranges every number has (1e308, Infinity, an id past int4; see validation.ts): its own code.
    const limit = Math.abs(Number((first?.params as { limit?: unknown } | undefined)?.limit));
    const range =
      first?.keyword === 'finite' ||
      (RANGE_KEYWORDS.has(first?.keyword ?? '') && (limit === INT4_MAX || limit === Number.MAX_SAFE_INTEGER));
    return new AppError(range ? HTTP_ERRORS.NUMBER_OUT_OF_RANGE : HTTP_ERRORS.INVALID_REQUEST, {
      detail: detail.trim(),
    });
  }
  const mapped = fastifyError.code ? FASTIFY_CODES[fastifyError.code] : undefined;
  if (mapped) return new AppError(HTTP_ERRORS[mapped]);
  return new AppError(HTTP_ERRORS.INTERNAL_ERROR);
}

/** The caller's language from Accept-Language; Chinese is the product's fallback (spec doc 1 §1). */
export function requestLanguage(request: FastifyRequest): Language {
  const header = request.headers['accept-language'];
  if (!header) return 'zh';
  for (const part of header.split(',')) {
    const tag = part.split(';')[0]?.trim().toLowerCase() ?? '';
    if (tag.startsWith('zh')) return 'zh';
    if (tag.startsWith('en')) return 'en';
  }
  return 'zh';
}

export function notFoundError(request: FastifyRequest): AppError {
  return new AppError(HTTP_ERRORS.NOT_FOUND, { method: request.method, path: request.url.split('?')[0] ?? '' });
}
