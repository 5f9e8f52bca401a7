import type { Json } from '../../convert/types.ts';
import type { Usage } from '../../types.ts';
import { num } from '../upstream-json.ts';

/** A language model's token counts from a prediction's `metrics`; undefined when it reports none. */
export function replicateUsage(prediction: unknown): Usage | undefined {
  const metrics = (prediction as Json | undefined)?.metrics;
  if (!metrics || typeof metrics.input_token_count !== 'number') return undefined;
  return { promptTokens: num(metrics.input_token_count), completionTokens: num(metrics.output_token_count) };
}
