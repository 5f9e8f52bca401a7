import type { IncomingHttpHeaders } from 'node:http';
import type { OptionsService } from '../../domain/options/index.ts';
import type { PickReason } from './route-plan.ts';

/** The role from which a caller may ask for the route header (administrators and root). */
const ADMIN_ROLE = 10;

/**
 * "Why this route" (issue 18 item 7): how the channel that served (or last failed) a request was
 * chosen. Written to the log's admin detail (`admin_info.route`) and, for administrators who send
 * `X-Tollgate-Debug: route` or when circuit_setting.route_header is on, to the X-Tollgate-Route header.
 */
export interface RouteTrace {
  channel: number;
  group: string;
  /** The priority tier the channel was in. */
  priority: number;
  /** affinity, weighted, only, circuit_fallback, or pinned (`sk-…-<id>`). */
  how: PickReason['how'] | 'pinned';
  weight?: number;
  tier_weight?: number;
  /** Which attempt this was: 0 the first, n the n-th retry. */
  retry: number;
  /** Channels passed over because their circuits were open, over every pick of the request. */
  circuits_skipped: number[];
  /** The attempt was a half-open circuit's probe. */
  probe?: true;
}

export function routeTrace(
  pick: { channelId: number; group: string; priority: number; reason: PickReason | 'pinned' },
  retry: number,
  circuitsSkipped: readonly number[],
  probe: boolean,
): RouteTrace {
  const reason = pick.reason;
  const trace: RouteTrace = {
    channel: pick.channelId,
    group: pick.group,
    priority: pick.priority,
    how: reason === 'pinned' ? 'pinned' : reason.how,
    retry,
    circuits_skipped: [...new Set(circuitsSkipped)],
  };
  if (reason !== 'pinned' && reason.weight !== undefined) {
    trace.weight = reason.weight;
    trace.tier_weight = reason.tierWeight ?? 0;
  }
  if (probe) trace.probe = true;
  return trace;
}

/** Whether this caller's answer carries X-Tollgate-Route. */
export function wantsRouteHeader(headers: IncomingHttpHeaders, role: number, options: OptionsService): boolean {
  if (options.getBoolean('circuit_setting.route_header')) return true;
  const asked = headers['x-tollgate-debug'];
  const values = (Array.isArray(asked) ? asked.join(',') : (asked ?? '')).toLowerCase().split(',');
  return role >= ADMIN_ROLE && values.some((value) => value.trim() === 'route');
}

/** The header's value: `key=value` pairs separated by `; ` (ASCII only: group names are percent-encoded). */
export function routeHeaderValue(trace: RouteTrace): string {
  const parts = [
    `channel=${trace.channel}`,
    `group=${encodeURIComponent(trace.group)}`,
    `priority=${trace.priority}`,
    `pick=${trace.how}`,
  ];
  if (trace.weight !== undefined) parts.push(`weight=${trace.weight}/${trace.tier_weight ?? 0}`);
  parts.push(`retry=${trace.retry}`);
  if (trace.circuits_skipped.length > 0) parts.push(`circuits_skipped=${trace.circuits_skipped.join(',')}`);
  if (trace.probe) parts.push('probe=1');
  return parts.join('; ');
}
