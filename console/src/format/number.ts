/**
 * Numbers in displays (spec doc 1 §1): 10,000 and above with k, 1,000,000 and above with M,
 * 1,000,000,000 and above with B; one decimal at most, no trailing ".0". Below 10,000 the number as is.
 */
export function formatCompact(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const sign = value < 0 ? '-' : '';
  const n = Math.abs(value);
  const scaled = (divisor: number, suffix: string) => {
    const rounded = Math.round((n / divisor) * 10) / 10;
    return `${sign}${Number.isInteger(rounded) ? rounded.toFixed(0) : rounded.toFixed(1)}${suffix}`;
  };
  if (n >= 1e9) return scaled(1e9, 'B');
  if (n >= 1e6) return scaled(1e6, 'M');
  if (n >= 1e4) return scaled(1e3, 'k');
  return `${sign}${Number.isInteger(n) ? n : Math.round(n * 100) / 100}`;
}
