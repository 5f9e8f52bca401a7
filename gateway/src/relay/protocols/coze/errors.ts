import { errorType } from '../hub-answer.ts';
import type { UpstreamError } from '../types.ts';

/** The HTTP status of a Coze business code (Coze often answers HTTP 200 with an error code). */
export function cozeStatus(code: number, httpStatus: number): number {
  const known: Record<number, number> = { 4000: 400, 4100: 401, 4101: 403, 4200: 404, 4013: 429 };
  return known[code] ?? (httpStatus >= 400 ? httpStatus : 502);
}

/** Coze's error body `{code, msg}`, or whatever text it sent. */
export function parseCozeError(status: number, text: string): UpstreamError {
  try {
    const body = JSON.parse(text) as { code?: unknown; msg?: unknown };
    if (typeof body.msg === 'string' && body.msg !== '') {
      const code = typeof body.code === 'number' ? body.code : 0;
      const mapped = code === 0 ? status : cozeStatus(code, status);
      return { status: mapped, message: body.msg, type: errorType(mapped), code: code === 0 ? null : String(code) };
    }
  } catch {
    // Not JSON: the raw text below.
  }
  return {
    status,
    message: text.slice(0, 1000) || `Coze answered HTTP ${status}`,
    type: errorType(status),
    code: null,
  };
}
