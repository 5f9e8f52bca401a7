import { publicClaudeId } from './models.ts';

/** new-api's fallback for a map without the model or a "default", and ours for an empty setting. */
export const DEFAULT_REGION = 'global';

const REGION = /^[a-z0-9-]+$/;

/**
 * The region a model is served from, by the channel's `other`: empty (global), one region, or a JSON
 * map of model to region with a "default" (the model as sent upstream, or its public Claude name).
 * A problem when the setting is not usable.
 */
export function regionFor(other: string, model: string): { region: string } | { problem: string } {
  const text = other.trim();
  if (text === '') return { region: DEFAULT_REGION };
  let region: unknown = text;
  if (text.startsWith('{')) {
    let map: unknown;
    try {
      map = JSON.parse(text);
    } catch {
      return { problem: 'the JSON map of model to region does not parse' };
    }
    const table = (typeof map === 'object' && map !== null ? map : {}) as Record<string, unknown>;
    region = table[model] ?? table[publicClaudeId(model)] ?? table.default ?? DEFAULT_REGION;
  }
  if (typeof region !== 'string' || !REGION.test(region)) {
    return { problem: `"${String(region)}" is not a region name (e.g. us-central1 or global)` };
  }
  return { region };
}

/** Multi-region locations, served from their own regional-endpoint hosts. */
const MULTI_REGIONS = new Set(['us', 'eu']);

/** Google's host for a region: the global endpoint has no region prefix; multi-regions have `.rep.` hosts. */
export function vertexHost(region: string): string {
  if (region === 'global') return 'aiplatform.googleapis.com';
  if (MULTI_REGIONS.has(region)) return `aiplatform.${region}.rep.googleapis.com`;
  return `${region}-aiplatform.googleapis.com`;
}
