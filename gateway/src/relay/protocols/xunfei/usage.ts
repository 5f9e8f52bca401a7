import type { Usage } from '../../types.ts';

type Json = Record<string, any>;

/** `payload.usage.text` of a Spark frame in the canonical form. */
export function sparkUsage(frame: unknown): Usage | undefined {
  const usage = (frame as Json | undefined)?.payload?.usage?.text;
  if (typeof usage !== 'object' || usage === null) return undefined;
  return { promptTokens: Number(usage.prompt_tokens) || 0, completionTokens: Number(usage.completion_tokens) || 0 };
}

export const xunfeiUsageFromBody = (_format: unknown, body: unknown) => sparkUsage(body);
