/** Number formats of the relay benchmark's report. */

export const ms = (v: number | undefined) => (v !== undefined && Number.isFinite(v) ? v.toFixed(2) : '-');

/** Micro-seconds with one decimal, for per-event figures. */
export const us = (msValue: number | undefined) =>
  msValue !== undefined && Number.isFinite(msValue) ? `${(msValue * 1000).toFixed(1)} µs` : '-';

export const MiB = 1024 * 1024;

export const mib = (bytes: number | undefined) =>
  bytes !== undefined && Number.isFinite(bytes) ? (bytes / MiB).toFixed(0) : '-';

export const pct = (v: number | undefined) => (v !== undefined && Number.isFinite(v) ? `${Math.round(v * 100)}%` : '-');

/** A Markdown table, padded so it also reads in a terminal. */
export function table(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

/** Units of the goals' figures. */
export type Unit = '%' | 'ms' | 'µs' | 'MiB';

/** A goal's figure in its unit, with as many decimals as the unit needs. */
export function figure(value: number, unit: Unit): string {
  if (!Number.isFinite(value)) return '-';
  if (unit === '%') return `${value.toFixed(1)}%`;
  return `${value.toFixed(unit === 'ms' ? 2 : unit === 'µs' ? 1 : 0)} ${unit}`;
}
