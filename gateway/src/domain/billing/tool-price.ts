import { type BillingOptions, numberAt, ratioMap } from './options.ts';

/** Paid tools and their keys in `tool_price_setting.prices` (USD per 1,000 calls). */
export type PaidTool = 'web_search' | 'web_search_preview' | 'google_search' | 'file_search';

/**
 * USD per 1,000 calls of `tool` for `model`: an exact `tool:model` entry, else the longest matching
 * `tool:prefix*` entry, else the tool's own price, else 0 (an unpriced tool is free).
 */
export function toolPriceUsd(options: BillingOptions, tool: PaidTool, model: string): number {
  const prices = ratioMap(options, 'tool_price_setting.prices');
  const exact = numberAt(prices, `${tool}:${model}`);
  if (exact !== undefined) return exact;
  let best: { length: number; price: number } | undefined;
  const head = `${tool}:`;
  for (const key of Object.keys(prices)) {
    if (!key.startsWith(head) || !key.endsWith('*')) continue;
    const prefix = key.slice(head.length, -1);
    const price = numberAt(prices, key);
    if (price === undefined || !model.startsWith(prefix)) continue;
    if (best === undefined || prefix.length > best.length) best = { length: prefix.length, price };
  }
  return best?.price ?? numberAt(prices, tool) ?? 0;
}
