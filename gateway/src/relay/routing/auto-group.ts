import type { RelayCaller } from '../auth/key-auth.ts';
import type { RoutingIndex } from './index-cache.ts';

/**
 * The groups a request walks (reference §4.2): the caller's group; for an auto token, its auto groups
 * that have a channel for the model, in AutoGroups order (the first of them when none has, so that the
 * request fails with model_not_found in a real group).
 */
export function routeGroups(routing: RoutingIndex, caller: RelayCaller, model: string): readonly string[] {
  if (!caller.autoGroups || caller.pinnedChannelId !== undefined) return [caller.group];
  const serving = caller.autoGroups.filter((group) => routing.candidates(group, model).length > 0);
  return serving.length > 0 ? serving : [caller.group];
}

/** The caller billed in `group`: the group an auto token's request was routed (and is charged) in. */
export function inGroup(caller: RelayCaller, group: string): RelayCaller {
  return group === caller.group ? caller : { ...caller, group };
}
