import { Counter, type Registry } from 'prom-client';

/**
 * Channel affinity's counters. The cache hit rate is
 * `sum(rate(tollgate_channel_affinity_lookups_total{result="hit"}[5m])) / sum(rate(tollgate_channel_affinity_lookups_total[5m]))`.
 * Labels are bounded: rule names come from the administrator's rules, never from requests.
 */
export interface AffinityMetrics {
  /** A request matched a rule: `hit` (its remembered channel served it), `miss` (no channel remembered) or
   * `unavailable` (the remembered channel can no longer serve it: disabled, removed or not in the group). */
  lookup(rule: string, result: 'hit' | 'miss' | 'unavailable'): void;
  /** A key moved to another channel after a success elsewhere (switch_on_success). */
  switched(rule: string): void;
}

export function createAffinityMetrics(registry: Registry): AffinityMetrics {
  const lookups = new Counter({
    name: 'tollgate_channel_affinity_lookups_total',
    help: 'Relay requests that matched a channel affinity rule, by rule and result (hit, miss, unavailable).',
    labelNames: ['rule', 'result'] as const,
    registers: [registry],
  });
  const switches = new Counter({
    name: 'tollgate_channel_affinity_switches_total',
    help: 'Channel affinity keys moved to another channel after it served a request their channel failed.',
    labelNames: ['rule'] as const,
    registers: [registry],
  });
  return {
    lookup: (rule, result) => lookups.inc({ rule, result }),
    switched: (rule) => switches.inc({ rule }),
  };
}
