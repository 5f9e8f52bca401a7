import type { Json } from '../../convert/types.ts';
import type { Usage } from '../../types.ts';
import { num } from '../upstream-json.ts';

/** A chat's `usage {token_count, input_count, output_count}`. */
export function cozeChatUsage(chat: unknown): Usage | undefined {
  const usage = (chat as Json | undefined)?.usage;
  if (!usage || typeof usage !== 'object') return undefined;
  return { promptTokens: num(usage.input_count), completionTokens: num(usage.output_count) };
}
