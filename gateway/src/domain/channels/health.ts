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

/**
 * The row after a good test of one key of a multi-key channel (passive-health recovery): that key
 * enabled again if the gateway disabled it, and the channel too if the gateway disabled it; the other
 * keys the gateway disabled stay disabled until their own test passes. A channel with one key
 * recovers whole (afterRecovery). Undefined when nothing changes.
 */
export function afterKeyRecovery(row: ChannelRow, keyIndex: number): HealthChange | undefined {
  const info = readChannelInfo(row.channel_info) as KeyHealthInfo;
  if (!info.is_multi_key || info.multi_key_size <= 1) return afterRecovery(row);
  if (row.status !== CHANNEL_STATUS.enabled && row.status !== CHANNEL_STATUS.autoDisabled) return undefined;
  const slot = String(keyIndex);
  const keyDisabled = info.multi_key_status_list[slot] === CHANNEL_STATUS.autoDisabled;
  if (!keyDisabled && row.status === CHANNEL_STATUS.enabled) return undefined;
  const without = <T>(record: Record<string, T> | undefined) =>
    Object.fromEntries(Object.entries(record ?? {}).filter(([key]) => key !== slot)) as Record<string, T>;
  const next: KeyHealthInfo = keyDisabled
    ? {
        ...info,
        multi_key_status_list: without(info.multi_key_status_list),
        multi_key_disabled_reason: without(info.multi_key_disabled_reason),
        multi_key_disabled_time: without(info.multi_key_disabled_time),
      }
    : info;
  // A key a person disabled is not enabled by a test: the channel stays off if it is the one tested.
  if (info.multi_key_status_list[slot] !== undefined && !keyDisabled) return undefined;
  const { status_reason: _reason, status_time: _time, ...other } = parseObject(row.other_info);
  return {
    status: CHANNEL_STATUS.enabled,
    other_info: row.status === CHANNEL_STATUS.enabled ? row.other_info : JSON.stringify(other),
    channel_info: JSON.stringify(next),
  };
}

/** The keys of a multi-key channel the gateway disabled, with when (unix seconds; 0 when unknown). */
export function autoDisabledKeys(channelInfo: string): Array<{ index: number; since: number }> {
  const info = readChannelInfo(channelInfo) as KeyHealthInfo;
  if (!info.is_multi_key) return [];
  return Object.entries(info.multi_key_status_list)
    .filter(([, status]) => status === CHANNEL_STATUS.autoDisabled)
    .map(([slot]) => ({ index: Number(slot), since: info.multi_key_disabled_time?.[slot] ?? 0 }))
    .filter((key) => Number.isInteger(key.index) && key.index >= 0 && key.index < info.multi_key_size);
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
