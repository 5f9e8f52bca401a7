import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { labelled } from './metrics.ts';

describe('labelled children', () => {
  it('makes one child per distinct label values, and exports what label objects would', async () => {
    const exported = async (bound: boolean) => {
      const registry = new Registry();
      const counter = new Counter({
        name: 't_total',
        help: 'h',
        labelNames: ['a', 'b'] as const,
        registers: [registry],
      });
      const histogram = new Histogram({
        name: 't_seconds',
        help: 'h',
        labelNames: ['a'] as const,
        buckets: [0.1, 1],
        registers: [registry],
      });
      let made = 0;
      const counterOf = labelled((a, b) => {
        made++;
        return counter.labels(a, b);
      });
      const histogramOf = labelled((a) => histogram.labels(a));
      for (const [a, b, value] of [
        ['x', 'y', 2],
        ['x', 'y', 3],
        ['x', 'z', 0],
        ['xy', '', 1],
      ] as const) {
        if (bound) {
          counterOf(a, b).inc(value);
          histogramOf(a).observe(value / 10);
        } else {
          counter.inc({ a, b }, value);
          histogram.observe({ a }, value / 10);
        }
      }
      return { text: await registry.metrics(), made };
    };
    const bound = await exported(true);
    expect(bound.made).toBe(3);
    expect(bound.text).toBe((await exported(false)).text);
    expect(bound.text).toContain('t_total{a="x",b="y"} 5');
  });
});
