import { parseOpenAIError } from '../openai/errors.ts';
import type { UpstreamError } from '../types.ts';

/** Ollama's `{"error": "model 'x' not found"}` (its /v1 answers in OpenAI's shape, read the same way). */
export function parseOllamaError(status: number, text: string): UpstreamError {
  const error = parseOpenAIError(status, text);
  return error.type === 'upstream_error' && error.code === null ? { ...error, type: 'ollama_error' } : error;
}
