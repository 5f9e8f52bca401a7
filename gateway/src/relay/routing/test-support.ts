import type { ChannelSnapshot } from '../types.ts';

/** A deterministic random source for tests (mulberry32): the same seed, the same picks. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A minimal enabled channel snapshot for routing tests. */
export function snapshot(id: number, fields: Partial<ChannelSnapshot> = {}): ChannelSnapshot {
  return {
    id,
    type: 1,
    name: `channel-${id}`,
    status: 1,
    baseUrl: '',
    keys: [`sk-${id}`],
    multiKeyMode: 'random',
    models: ['gpt-4o'],
    groups: ['default'],
    priority: 0,
    weight: 0,
    tag: null,
    autoBan: true,
    other: '',
    openaiOrganization: null,
    testModel: null,
    ...fields,
  };
}
