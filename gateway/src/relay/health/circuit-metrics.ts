import { Counter, Gauge, type Registry } from 'prom-client';
import type { CircuitTransition } from './circuits.ts';

/**
 * The circuits' metrics: transitions counted by the pod that made them (so a sum over pods counts each
 * once), and the circuits open now as this pod sees them (every pod sees the same shared state, so a
 * dashboard takes the max over pods). Label values are channel ids and the three states: bounded.
 */
export function createCircuitMetrics(
  registry: Registry,
  openCounts: () => ReadonlyMap<number, number>,
): { transition(t: CircuitTransition): void } {
  const transitions = new Counter({
    name: 'tollgate_circuit_transitions_total',
    help: 'Circuit state changes (closed, open, half_open) by channel, counted by the pod that made them.',
    labelNames: ['channel', 'from', 'to'] as const,
    registers: [registry],
  });
  new Gauge({
    name: 'tollgate_circuits_open',
    help: 'Circuits (channel, key, model) open or half-open now, by channel.',
    labelNames: ['channel'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [channel, count] of openCounts()) this.set({ channel: String(channel) }, count);
    },
  });
  return {
    transition(t) {
      transitions.inc({ channel: String(t.channelId), from: t.from, to: t.to });
    },
  };
}
