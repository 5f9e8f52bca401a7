import { parseOpenAIError } from '../openai/errors.ts';
import type { UpstreamError } from '../types.ts';

/** DashScope's native `{code, message, request_id}`, or the compatible mode's OpenAI shape. */
export function parseAliError(status: number, text: string): UpstreamError {
  try {
    const body = JSON.parse(text) as { code?: unknown; message?: unknown; error?: unknown };
    if (body.error === undefined && typeof body.message === 'string' && typeof body.code === 'string') {
      return { status, message: body.message, type: 'dashscope_error', code: body.code };
    }
  } catch {
    // Not JSON: the OpenAI reader keeps the raw text.
  }
  return parseOpenAIError(status, text);
}
