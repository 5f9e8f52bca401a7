import { CHANNEL_STATUS } from './constants.ts';
import { type Channel, splitList } from './form.ts';

/** A tag row of tag mode (spec doc 2 §2): its channels and what the row shows for them together. */
export interface TagRow {
  kind: 'tag';
  tag: string;
  children: Channel[];
  /** Average response time of the children, in ms (spec doc 2 §9). */
  responseTime: number;
  enabled: number;
  groups: string[];
  models: string[];
  types: number[];
  priority: number;
  weight: number;
  usedQuota: number;
  balance: number;
}

export type ChannelRow = { kind: 'channel'; channel: Channel } | TagRow;

const distinct = (lists: string[][]) => [...new Set(lists.flat())];

export function tagRow(tag: string, children: Channel[]): TagRow {
  const total = children.reduce((sum, c) => sum + (c.response_time || 0), 0);
  return {
    kind: 'tag',
    tag,
    children,
    responseTime: children.length > 0 ? Math.round(total / children.length) : 0,
    enabled: children.filter((c) => c.status === CHANNEL_STATUS.enabled).length,
    groups: distinct(children.map((c) => splitList(c.group))),
    models: distinct(children.map((c) => splitList(c.models))),
    types: [...new Set(children.map((c) => c.type))],
    priority: Math.max(...children.map((c) => c.priority ?? 0)),
    weight: Math.max(...children.map((c) => c.weight ?? 0)),
    usedQuota: children.reduce((sum, c) => sum + (c.used_quota || 0), 0),
    balance: children.reduce((sum, c) => sum + (c.balance || 0), 0),
  };
}

/**
 * Tag mode: channels with a tag go under one row per tag (in the order the tags first appear), the
 * others stay single rows. Without tag mode every channel is its own row.
 */
export function buildRows(channels: Channel[], tagMode: boolean): ChannelRow[] {
  if (!tagMode) return channels.map((channel) => ({ kind: 'channel', channel }));
  const rows: ChannelRow[] = [];
  const byTag = new Map<string, Channel[]>();
  for (const channel of channels) {
    const tag = channel.tag?.trim();
    if (!tag) {
      rows.push({ kind: 'channel', channel });
      continue;
    }
    let children = byTag.get(tag);
    if (!children) {
      children = [];
      byTag.set(tag, children);
      rows.push({ kind: 'tag', tag, children } as unknown as TagRow);
    }
    children.push(channel);
  }
  return rows.map((row) => (row.kind === 'tag' ? tagRow(row.tag, row.children) : row));
}
