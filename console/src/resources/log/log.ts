/** A usage log record (spec doc 3 §3); `channel` and `channel_name` only for administrators. */
export interface LogRecord {
  id: number;
  user_id: number;
  created_at: number;
  type: number;
  content: string;
  username: string;
  token_name: string;
  model_name: string;
  quota: number;
  prompt_tokens: number;
  completion_tokens: number;
  use_time: number;
  is_stream: boolean;
  channel?: number;
  channel_name?: string;
  group: string;
  ip?: string;
  request_id?: string;
  other: string;
}

/** Log types (spec doc 3 §4): 1 top-up, 2 consume, 3 manage, 4 system, 5 error; the gateway adds 6 refund. */
export const LOG_TYPES = [
  { id: 0, label: 'log.types.all' },
  { id: 1, label: 'log.types.topup' },
  { id: 2, label: 'log.types.consume' },
  { id: 3, label: 'log.types.manage' },
  { id: 4, label: 'log.types.system' },
  { id: 5, label: 'log.types.error' },
  { id: 6, label: 'log.types.refund' },
] as const;

export const LOG_TYPE_COLOR: Record<number, 'success' | 'primary' | 'secondary' | 'info' | 'error' | 'warning'> = {
  1: 'success',
  2: 'primary',
  3: 'secondary',
  4: 'info',
  5: 'error',
  6: 'warning',
};

/** The columns of the table, in order; administrators-only ones flagged (spec doc 3 §2, §6). */
export const LOG_COLUMNS = [
  { key: 'created_at', label: 'log.fields.created_at' },
  { key: 'channel', label: 'log.fields.channel', admin: true },
  { key: 'username', label: 'log.fields.username', admin: true },
  { key: 'token_name', label: 'log.fields.token_name' },
  { key: 'group', label: 'log.fields.group' },
  { key: 'type', label: 'log.fields.type' },
  { key: 'model_name', label: 'log.fields.model_name' },
  { key: 'use_time', label: 'log.fields.use_time' },
  { key: 'prompt_tokens', label: 'log.fields.prompt_tokens' },
  { key: 'completion_tokens', label: 'log.fields.completion_tokens' },
  { key: 'quota', label: 'log.fields.quota' },
  { key: 'retry', label: 'log.fields.retry', admin: true },
  { key: 'ip', label: 'log.fields.ip' },
  { key: 'content', label: 'log.fields.content' },
] as const;

export type LogColumn = (typeof LOG_COLUMNS)[number]['key'];

/** Where the chosen columns are remembered (spec doc 2 §9, doc 3 §9). */
export const COLUMNS_KEY = 'logs-table-columns';

export function loadColumns(): Partial<Record<LogColumn, boolean>> {
  try {
    const parsed = JSON.parse(localStorage.getItem(COLUMNS_KEY) ?? '{}') as unknown;
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Partial<Record<LogColumn, boolean>>)
      : {};
  } catch {
    return {};
  }
}

export function saveColumns(columns: Partial<Record<LogColumn, boolean>>): void {
  try {
    localStorage.setItem(COLUMNS_KEY, JSON.stringify(columns));
  } catch {
    // Storage full or disabled: the choice lasts for this page only.
  }
}

/** use_time colours (spec doc 3 §9): under 101 s green, under 300 s orange, else red. */
export function timeColor(seconds: number): 'success' | 'warning' | 'error' {
  return seconds < 101 ? 'success' : seconds < 300 ? 'warning' : 'error';
}

/** First-token time colours (spec doc 3 §9): under 3 s green, under 10 s orange, else red. */
export function frtColor(milliseconds: number): 'success' | 'warning' | 'error' {
  return milliseconds < 3000 ? 'success' : milliseconds < 10_000 ? 'warning' : 'error';
}

/** The `other` JSON of a log as an object ({} when empty or unreadable). */
export function parseOther(other: string | undefined): Record<string, any> {
  if (!other) return {};
  try {
    const parsed = JSON.parse(other) as unknown;
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, any>)
      : {};
  } catch {
    return {};
  }
}

/** The applied filters of the list, as the gateway names them (spec doc 3 §7). */
export interface LogFilterValues {
  type?: number;
  start_timestamp?: number;
  end_timestamp?: number;
  token_name?: string;
  model_name?: string;
  group?: string;
  username?: string;
  channel?: number | string;
}

/** The default range (spec doc 3 §9): from today 00:00 to now plus one hour. */
export function defaultLogFilters(now = new Date()): LogFilterValues {
  const start = new Date(now.getFullYear(), now.getMonth(), now.getDate());
  return {
    type: 0,
    start_timestamp: Math.floor(start.getTime() / 1000),
    end_timestamp: Math.floor(now.getTime() / 1000) + 3600,
  };
}

/** The filters as query parameters for /api/log/stat and /api/log/self/stat (empty ones left out). */
export function statQuery(filters: LogFilterValues, admin: boolean): Record<string, string | number> {
  const query: Record<string, string | number> = {};
  const keys = ['type', 'start_timestamp', 'end_timestamp', 'token_name', 'model_name', 'group'] as const;
  for (const key of keys) {
    const value = filters[key];
    if (value !== undefined && value !== '' && value !== 0) query[key] = value;
  }
  if (admin) {
    if (filters.username) query.username = filters.username;
    if (filters.channel !== undefined && filters.channel !== '') query.channel = filters.channel;
  }
  return query;
}
