import { formatCompact } from './number.ts';

/** What quota display needs from the status object (spec doc 1 §3). */
export interface QuotaDisplaySettings {
  quota_per_unit: number;
  display_in_currency: boolean;
  /** USD (default), CNY, TOKENS or CUSTOM. */
  quota_display_type?: string;
  usd_exchange_rate?: number;
  custom_currency_symbol?: string;
  custom_currency_exchange_rate?: number;
}

/** Default quota per US dollar (spec doc 1 §9). */
export const DEFAULT_QUOTA_PER_UNIT = 500_000;

export type QuotaDisplay = { kind: 'currency'; symbol: string; rate: number } | { kind: 'units' };

/**
 * How quota is shown: raw units when currency display is off or the type is TOKENS; otherwise a currency:
 * US dollars, yuan (× USDExchangeRate) or a custom symbol and rate (reference §5.1).
 */
export function quotaDisplay(settings: QuotaDisplaySettings): QuotaDisplay {
  const type = (settings.quota_display_type || 'USD').toUpperCase();
  if (!settings.display_in_currency || type === 'TOKENS') return { kind: 'units' };
  if (type === 'CNY') return { kind: 'currency', symbol: '¥', rate: positive(settings.usd_exchange_rate, 7.3) };
  if (type === 'CUSTOM') {
    return {
      kind: 'currency',
      symbol: settings.custom_currency_symbol || '¤',
      rate: positive(settings.custom_currency_exchange_rate, 1),
    };
  }
  return { kind: 'currency', symbol: '$', rate: 1 };
}

/**
 * A quota amount for display: "$1.23" (2 decimals by default) or "12.3k" units. A positive amount too
 * small for the decimals shows the smallest step ("$0.01") rather than zero.
 */
export function formatQuota(quota: number, settings: QuotaDisplaySettings, digits = 2): string {
  const display = quotaDisplay(settings);
  if (display.kind === 'units') return formatCompact(quota);
  const amount = (quota / quotaPerUnit(settings)) * display.rate;
  const smallest = 10 ** -digits;
  if (amount > 0 && amount < smallest) return `${display.symbol}${smallest.toFixed(digits)}`;
  return `${amount < 0 ? '-' : ''}${display.symbol}${Math.abs(amount).toFixed(digits)}`;
}

/** The amount a quota is worth in the display currency (or the units themselves), unrounded. */
export function quotaToAmount(quota: number, settings: QuotaDisplaySettings): number {
  const display = quotaDisplay(settings);
  return display.kind === 'units' ? quota : (quota / quotaPerUnit(settings)) * display.rate;
}

/** The quota (an integer) worth an amount typed in the display currency (or units): for quota inputs. */
export function amountToQuota(amount: number, settings: QuotaDisplaySettings): number {
  const display = quotaDisplay(settings);
  return Math.round(display.kind === 'units' ? amount : (amount / display.rate) * quotaPerUnit(settings));
}

function quotaPerUnit(settings: QuotaDisplaySettings): number {
  return positive(settings.quota_per_unit, DEFAULT_QUOTA_PER_UNIT);
}

function positive(value: number | undefined, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : fallback;
}
