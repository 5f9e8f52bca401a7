import type { UpstreamError } from '../types.ts';
import { codeOfGeminiError, typeForStatus } from './convert/index.ts';

/**
 * Google's error body `{"error": {"code", "message", "status", "details"}}` (sometimes wrapped in a
 * one-element array, as streams without alt=sse send it), or whatever text the upstream sent.
 */
export function parseGeminiError(status: number, text: string): UpstreamError {
  try {
    const parsed = JSON.parse(text) as unknown;
    const body = (Array.isArray(parsed) ? parsed[0] : parsed) as { error?: unknown } | undefined;
    const error = body?.error;
    if (typeof error === 'object' && error !== null) {
      const e = error as Record<string, any>;
      if (typeof e.message === 'string' && e.message !== '') {
        return {
          status,
          message: e.message,
          type: typeForStatus(typeof e.status === 'string' ? e.status : undefined),
          code: codeOfGeminiError(e),
        };
      }
    }
  } catch {
    // Not JSON: fall through to the raw text.
  }
  return {
    status,
    message: text.slice(0, 1000) || `upstream answered HTTP ${status}`,
    type: 'upstream_error',
    code: null,
  };
}
