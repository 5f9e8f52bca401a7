import { defineErrors, type ErrorParams } from '../../../errors.ts';
import { RelayRuleError } from '../../routing/errors.ts';
import { parseClaudeError } from '../anthropic/index.ts';
import { parseGeminiError } from '../gemini/index.ts';
import type { UpstreamError } from '../types.ts';

/** A Vertex channel whose own configuration cannot make a request: not the client's fault, nor a crash. */
export const VERTEX_ERRORS = defineErrors({
  'channel:key_invalid': {
    status: 401,
    message: {
      zh: 'Vertex AI 渠道密钥无效：{problem}',
      en: 'The Vertex AI channel key is not valid: {problem}',
    },
  },
  'channel:region_invalid': {
    status: 400,
    message: {
      zh: 'Vertex AI 渠道的地区设置无效：{problem}',
      en: 'The Vertex AI channel region setting is not valid: {problem}',
    },
  },
});

/** The channel's key or region is unusable: another channel may still serve the request. */
export function vertexChannelError(code: keyof typeof VERTEX_ERRORS, params: ErrorParams): RelayRuleError {
  return new RelayRuleError(VERTEX_ERRORS[code], params, 'new_api_error', false);
}

/**
 * Vertex answers its own refusals (auth, quota, a model not found) in Google's shape
 * `{"error": {"code", "message", "status"}}`; Claude's own errors come through rawPredict in Anthropic's
 * `{"type": "error", "error": {"type", "message"}}`. Google's carries a status name, Anthropic's a type.
 */
export function parseVertexError(status: number, text: string): UpstreamError {
  try {
    const body = JSON.parse(text) as unknown;
    const error = (Array.isArray(body) ? body[0] : body)?.error;
    if (typeof error === 'object' && error !== null && 'type' in error && !('status' in error)) {
      return parseClaudeError(status, text);
    }
  } catch {
    // Not JSON: Google's parser reports the raw text.
  }
  return parseGeminiError(status, text);
}
