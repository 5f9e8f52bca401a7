import type { AdminLogView, UserLogView } from './view.ts';

/** Characters that make a spreadsheet read a cell as a formula (CSV injection). */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * One CSV field (RFC 4180): quoted when it holds a comma, quote or line break, quotes doubled.
 * Text that a spreadsheet would run as a formula (a token named `=HYPERLINK(…)`) gets a leading
 * apostrophe, the usual defence; numbers are never touched.
 */
export function csvField(value: string | number | boolean): string {
  let text = String(value);
  if (typeof value === 'string' && FORMULA_START.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function csvLine(values: Array<string | number | boolean>): string {
  return `${values.map(csvField).join(',')}\r\n`;
}

const TYPE_NAMES: Record<number, string> = {
  0: 'unknown',
  1: 'topup',
  2: 'consume',
  3: 'manage',
  4: 'system',
  5: 'error',
  6: 'refund',
};

/** ISO 8601 in UTC, to the second. */
const isoTime = (seconds: number) => new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

type Cell = string | number | boolean;
interface Column<V> {
  name: string;
  value(row: V, quotaPerUnit: number): Cell;
}

const before: Array<Column<UserLogView>> = [
  { name: 'id', value: (r) => r.id },
  { name: 'time', value: (r) => isoTime(r.created_at) },
  { name: 'created_at', value: (r) => r.created_at },
  { name: 'type', value: (r) => r.type },
  { name: 'type_name', value: (r) => TYPE_NAMES[r.type] ?? 'unknown' },
  { name: 'username', value: (r) => r.username },
  { name: 'token_name', value: (r) => r.token_name },
  { name: 'model_name', value: (r) => r.model_name },
  { name: 'group', value: (r) => r.group },
];
const after: Array<Column<UserLogView>> = [
  { name: 'prompt_tokens', value: (r) => r.prompt_tokens },
  { name: 'completion_tokens', value: (r) => r.completion_tokens },
  { name: 'quota', value: (r) => r.quota },
  // 500,000 quota = 1 USD by default (option QuotaPerUnit); six decimals keep 1 quota visible.
  { name: 'cost_usd', value: (r, perUnit) => (r.quota / perUnit).toFixed(6) },
  { name: 'use_time', value: (r) => r.use_time },
  { name: 'is_stream', value: (r) => r.is_stream },
  { name: 'ip', value: (r) => r.ip },
  { name: 'request_id', value: (r) => r.request_id },
  { name: 'content', value: (r) => r.content },
  { name: 'other', value: (r) => r.other },
];

export const USER_LOG_COLUMNS: Array<Column<UserLogView>> = [...before, ...after];
export const ADMIN_LOG_COLUMNS: Array<Column<AdminLogView>> = [
  ...before,
  { name: 'user_id', value: (r) => r.user_id },
  { name: 'channel', value: (r) => r.channel },
  { name: 'channel_name', value: (r) => r.channel_name },
  ...after,
];

export function csvHeader<V>(columns: Array<Column<V>>): string {
  return csvLine(columns.map((c) => c.name));
}

export function csvRows<V>(columns: Array<Column<V>>, rows: V[], quotaPerUnit: number): string {
  return rows.map((row) => csvLine(columns.map((c) => c.value(row, quotaPerUnit)))).join('');
}
