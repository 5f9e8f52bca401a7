import { CHANNEL_STATUS } from './input.ts';
import { type ChannelInfo, readChannelInfo } from './keys.ts';
import type { ChannelRow } from './view.ts';

/**
 * What the gateway itself decides about a channel's health (reference §4.4), as changes to its row:
 * pure functions, so the rules can be read and tested apart from the database.
 */

export type HealthChange = Pick<ChannelRow, 'status' | 'other_info' | 'channel_info'>;

/** channel_info as new-api keeps it, plus why and when each key was disabled. */
interface KeyHealthInfo extends ChannelInfo {
  multi_key_disabled_reason?: Record<string, string>;
  multi_key_disabled_time?: Record<string, number>;
}

/**
 * The row after an upstream failure that warrants disabling. On a multi-key channel only the failing
 * key is disabled, and the channel only once no enabled key is left. Undefined when nothing changes
 * (already disabled, or manually disabled: a person's decision is never overwritten).
 */
export function afterFailure(row: ChannelRow, reason: string, at: number, keyIndex?: number): HealthChange | undefined {
  if (row.status !== CHANNEL_STATUS.enabled) return undefined;
  const info = readChannelInfo(row.channel_info) as KeyHealthInfo;
  const keyCount = info.multi_key_size;
  let channelInfo = row.channel_info;
  if (info.is_multi_key && keyIndex !== undefined && keyCount > 1) {
    const slot = String(keyIndex);
    if (info.multi_key_status_list[slot] !== undefined) return undefined;
    const next: KeyHealthInfo = {
      ...info,
      multi_key_status_list: { ...info.multi_key_status_list, [slot]: CHANNEL_STATUS.autoDisabled },
      multi_key_disabled_reason: { ...info.multi_key_disabled_reason, [slot]: reason },
      multi_key_disabled_time: { ...info.multi_key_disabled_time, [slot]: at },
    };
    channelInfo = JSON.stringify(next);
    if (Object.keys(next.multi_key_status_list).length < keyCount) {
      return { status: row.status, other_info: row.other_info, channel_info: channelInfo };
    }
  }
  return {
    status: CHANNEL_STATUS.autoDisabled,
    other_info: JSON.stringify({ ...parseObject(row.other_info), status_reason: reason, status_time: at }),
    channel_info: channelInfo,
  };
}

/**
 * The row after a successful re-test of an auto-disabled channel: enabled again, with the keys the
 * gateway disabled; keys a person disabled stay disabled. Undefined unless the gateway disabled it.
 */
export function afterRecovery(row: ChannelRow): HealthChange | undefined {
  if (row.status !== CHANNEL_STATUS.autoDisabled) return undefined;
  const info = readChannelInfo(row.channel_info) as KeyHealthInfo;
  const kept = (record: Record<string, unknown> | undefined) =>
    Object.fromEntries(
      Object.entries(record ?? {}).filter(([slot]) => info.multi_key_status_list[slot] !== CHANNEL_STATUS.autoDisabled),
    );
  const next: KeyHealthInfo = {
    ...info,
    multi_key_status_list: kept(info.multi_key_status_list) as Record<string, number>,
    multi_key_disabled_reason: kept(info.multi_key_disabled_reason) as Record<string, string>,
    multi_key_disabled_time: kept(info.multi_key_disabled_time) as Record<string, number>,
  };
  const { status_reason: _reason, status_time: _time, ...other } = parseObject(row.other_info);
  return {
    status: CHANNEL_STATUS.enabled,
    other_info: JSON.stringify(other),
    channel_info: row.channel_info ? JSON.stringify(next) : row.channel_info,
  };
}

export function parseObject(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}
