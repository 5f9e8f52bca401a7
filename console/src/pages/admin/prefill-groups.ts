import { api } from '../../providers/http.ts';

export type PrefillType = 'model' | 'tag' | 'endpoint';

/** A prefill group of /api/prefill_group: a list of names (model, tag), or the endpoint map's JSON text. */
export interface PrefillGroup {
  id: number;
  name: string;
  type: PrefillType;
  items: string[] | string;
  description: string;
}

export const PREFILL_TYPES: PrefillType[] = ['model', 'tag', 'endpoint'];

export const listPrefillGroups = (type?: PrefillType) =>
  api.get<PrefillGroup[]>('/api/prefill_group', type ? { query: { type } } : undefined);

/** The names a group holds, for a text box: one per line (an endpoint group's text as it is). */
export function itemsText(group: Pick<PrefillGroup, 'items'>): string {
  return Array.isArray(group.items) ? group.items.join('\n') : group.items;
}

/** The items to send for the text typed: names split on lines and commas, or the endpoint text. */
export function itemsOf(type: PrefillType, text: string): string[] | string {
  if (type === 'endpoint') return text;
  return text
    .split(/[\n,]/)
    .map((name) => name.trim())
    .filter((name) => name !== '');
}
