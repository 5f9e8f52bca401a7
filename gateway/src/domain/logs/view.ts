import type { LogRow } from '../../store/repositories/logs.ts';

/** A usage log as administrators see it: every column, the channel id named `channel` as new-api does. */
export interface AdminLogView {
  id: number;
  user_id: number;
  created_at: number;
  type: number;
  content: string;
  username: string;
  token_id: number;
  token_name: string;
  model_name: string;
  quota: number;
  prompt_tokens: number;
  completion_tokens: number;
  use_time: number;
  is_stream: boolean;
  channel: number;
  channel_name: string;
  group: string;
  ip: string;
  request_id: string;
  other: string;
}

/** What a user sees of their own log: no channel, and `other` without the administrator-only keys. */
export type UserLogView = Omit<AdminLogView, 'channel' | 'channel_name'>;

/** Keys of `other` that only administrators see (reference §5.7). */
const ADMIN_ONLY_OTHER = ['admin_info', 'stream_status'];

/** `other` for a user: the JSON object without administrator-only keys; anything unreadable is dropped, not leaked. */
export function userOther(other: string): string {
  if (!other) return '';
  let parsed: unknown;
  try {
    parsed = JSON.parse(other);
  } catch {
    return '';
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return '';
  const copy = { ...(parsed as Record<string, unknown>) };
  for (const key of ADMIN_ONLY_OTHER) delete copy[key];
  return JSON.stringify(copy);
}

function base(row: LogRow) {
  return {
    id: row.id,
    user_id: row.user_id,
    created_at: row.created_at,
    type: row.type,
    content: row.content,
    username: row.username,
    token_id: row.token_id,
    token_name: row.token_name,
    model_name: row.model_name,
    quota: row.quota,
    prompt_tokens: row.prompt_tokens,
    completion_tokens: row.completion_tokens,
    use_time: row.use_time,
    is_stream: row.is_stream,
    group: row.group,
    ip: row.ip,
    request_id: row.request_id,
  };
}

/** `names` holds current channel names; the name stored with the log is the fallback (a deleted channel). */
export function adminLogView(row: LogRow, names: Map<number, string>): AdminLogView {
  return {
    ...base(row),
    channel: row.channel_id,
    channel_name: names.get(row.channel_id) ?? row.channel_name,
    other: row.other,
  };
}

export function userLogView(row: LogRow): UserLogView {
  return { ...base(row), other: userOther(row.other) };
}
