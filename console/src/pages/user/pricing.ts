/** A pricing item (spec doc 3 §3). */
export interface PricingItem {
  model_name: string;
  /** 0 pay per usage, 1 pay per call. */
  quota_type: number;
  model_ratio: number;
  completion_ratio: number;
  model_price: number;
  enable_groups: string[];
  /** `tiered_expr`: priced by `billing_expr` (USD per 1M tokens), its ratios and price unused. */
  billing_mode?: 'tiered_expr';
  billing_expr?: string;
  billing_tiers?: string[];
  /** From the model's catalogue entry, when it has one (Models page). */
  vendor_id?: number;
  description?: string;
  tags?: string;
  icon?: string;
}

/** A vendor named by a catalogue entry (GET /api/pricing `vendors`). */
export interface PricingVendor {
  id: number;
  name: string;
  description: string;
  icon: string;
}

export interface PricingAnswer {
  success: boolean;
  message: string;
  data?: PricingItem[];
  group_ratio?: Record<string, number>;
  usable_group?: Record<string, string>;
  vendors?: PricingVendor[];
}

/** Case-insensitive substring match of the model name (spec doc 3 §5). */
export function matchesModel(item: PricingItem, query: string): boolean {
  const needle = query.trim().toLowerCase();
  return needle === '' || item.model_name.toLowerCase().includes(needle);
}

/**
 * Prices in USD (spec doc 3 §9): per 1M prompt tokens = model ratio × 2 × group ratio, completion × the
 * completion ratio; per call = model price × group ratio.
 */
export function usdPrices(item: PricingItem, groupRatio: number): { prompt: number; completion: number; call: number } {
  const prompt = item.model_ratio * 2 * groupRatio;
  return { prompt, completion: prompt * item.completion_ratio, call: item.model_price * groupRatio };
}

/**
 * A USD price as shown (spec doc 3 §9): as is, or at the top-up price (× price ÷ usd_exchange_rate) in USD,
 * or in CNY (× usd_exchange_rate).
 */
export function displayPrice(
  usd: number,
  options: { recharge: boolean; currency: 'USD' | 'CNY' },
  status: { price: number; usd_exchange_rate: number },
): string {
  const rate = status.usd_exchange_rate > 0 ? status.usd_exchange_rate : 7.3;
  let value = usd;
  if (options.recharge) value = (usd * (status.price > 0 ? status.price : rate)) / rate;
  if (options.recharge && options.currency === 'CNY') return `¥${round(value * rate)}`;
  return `$${round(value)}`;
}

const round = (n: number) => String(Number(n.toFixed(6)));
