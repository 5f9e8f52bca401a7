import { channelRuleError, type RelayRuleError } from './errors.ts';

export type ModelMappingResult =
  /** `mapped` is what logs record as is_model_mapped; billing keeps using the requested model. */
  { ok: true; upstreamModel: string; mapped: boolean } | { ok: false; error: RelayRuleError };

/** Resolutions per mapping object: a channel snapshot's mapping lives until the next reload. */
const resolved = new WeakMap<object, Map<string, ModelMappingResult>>();
/** Only models the channel serves reach it, but a bound keeps a hostile model list harmless. */
const MAX_CACHED = 1024;

/**
 * The model name to send upstream for `model` under a channel's model_mapping (reference §4.6):
 * mappings chain (`a→b`, `b→c` sends `c`); an entry mapping a name to itself ends the chain; a
 * chain that comes back to a name already seen is `channel:model_mapped_error` (skip-retry, but a
 * `channel:` code, so the retry decision tries another channel). Empty targets are ignored.
 * Billing always uses the requested model: this only says what the upstream sees.
 */
export function resolveModelMapping(
  model: string,
  mapping: Readonly<Record<string, unknown>> | undefined,
): ModelMappingResult {
  if (mapping === undefined) return { ok: true, upstreamModel: model, mapped: false };
  let cache = resolved.get(mapping);
  const hit = cache?.get(model);
  if (hit) return hit;
  const result = resolve(model, mapping);
  if (!cache) {
    cache = new Map();
    resolved.set(mapping, cache);
  }
  if (cache.size < MAX_CACHED) cache.set(model, result);
  return result;
}

function resolve(model: string, mapping: Readonly<Record<string, unknown>>): ModelMappingResult {
  const chain = [model];
  let current = model;
  let mapped = false;
  for (;;) {
    const next = Object.hasOwn(mapping, current) ? mapping[current] : undefined;
    if (typeof next !== 'string' || next === '') break;
    if (chain.includes(next)) {
      // `x→x` is "no further mapping", not a cycle; it leaves `mapped` as the chain so far made it.
      if (next === current) break;
      chain.push(next);
      return { ok: false, error: channelRuleError('channel:model_mapped_error', { chain: chain.join(' -> ') }) };
    }
    chain.push(next);
    current = next;
    mapped = true;
  }
  return { ok: true, upstreamModel: current, mapped };
}
