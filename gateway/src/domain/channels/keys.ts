/**
 * A channel's key text may hold several keys (reference §4.6 "Multi-key"): one per line, or a JSON
 * array (service-account JSON objects, which themselves span lines). A single JSON object is one key.
 */
export function splitKeys(text: string): string[] {
  const trimmed = text.trim();
  if (trimmed === '') return [];
  if (trimmed.startsWith('{')) return [trimmed];
  if (trimmed.startsWith('[')) {
    const array = parseArray(trimmed);
    if (array) return unique(array.map((k) => (typeof k === 'string' ? k.trim() : JSON.stringify(k))));
  }
  return unique(trimmed.split(/\r?\n/).map((line) => line.trim()));
}

function parseArray(text: string): unknown[] | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function unique(keys: string[]): string[] {
  return [...new Set(keys.filter((k) => k !== ''))];
}

export type MultiKeyMode = 'random' | 'polling';

/** new-api's `channel_info`: the multi-key state the relay reads and updates. */
export interface ChannelInfo {
  is_multi_key: boolean;
  multi_key_size: number;
  /** Key index -> status, for keys that are not enabled (absent means enabled). */
  multi_key_status_list: Record<string, number>;
  multi_key_polling_index: number;
  multi_key_mode: MultiKeyMode;
}

export function channelInfoFor(keyCount: number, mode: MultiKeyMode = 'random'): ChannelInfo {
  return {
    is_multi_key: keyCount > 1,
    multi_key_size: keyCount,
    multi_key_status_list: {},
    multi_key_polling_index: 0,
    multi_key_mode: mode,
  };
}

export function readChannelInfo(text: string): ChannelInfo {
  const fallback = channelInfoFor(1);
  if (!text) return fallback;
  try {
    const parsed = JSON.parse(text) as Partial<ChannelInfo>;
    return { ...fallback, ...parsed };
  } catch {
    return fallback;
  }
}
