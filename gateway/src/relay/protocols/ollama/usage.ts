import type { Usage, WireFormat } from '../../types.ts';
import { openAIUsage } from '../openai/usage.ts';

/** Ollama counts prompt tokens as `prompt_eval_count` and generated ones as `eval_count`. */
export function ollamaUsage(format: WireFormat, body: unknown): Usage | undefined {
  if (format !== 'ollama-chat' && format !== 'ollama-embed') return openAIUsage(format, body);
  const answer = body as { prompt_eval_count?: unknown; eval_count?: unknown } | undefined;
  if (answer?.prompt_eval_count === undefined && answer?.eval_count === undefined) return undefined;
  return { promptTokens: count(answer.prompt_eval_count), completionTokens: count(answer.eval_count) };
}

const count = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0);
