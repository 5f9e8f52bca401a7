import type { WireFormat } from './types.ts';

/**
 * The images an answer to an image request lists (OpenAI's `{data: [...]}`), or undefined for other
 * requests and answers that list none. A per-image price bills these, not the `n` the client asked for:
 * an upstream may make fewer.
 */
export function imagesListed(format: WireFormat, answer: unknown): number | undefined {
  if (format !== 'openai-images' && format !== 'openai-image-edits') return undefined;
  if (typeof answer !== 'object' || answer === null) return undefined;
  const data = (answer as { data?: unknown }).data;
  return Array.isArray(data) ? data.length : undefined;
}

/** The image count to bill: those listed, at most the `requested` (reserved for); `requested` when none are listed. */
export function imagesToBill(listed: number | undefined, requested: number | undefined): number | undefined {
  return listed === undefined ? requested : Math.min(listed, requested ?? 1);
}
