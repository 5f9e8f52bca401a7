import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { counterSeries, histogramSeries, labelled } from './metrics.ts';

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

describe('histogram and counter series', () => {
  /** Each observation once through prom-client's own methods, once through the series; the exports must match. */
  const exported = async (fast: boolean) => {
    const registry = new Registry();
    const labelNames = ['route', 'method'] as const;
    const histogram = new Histogram({
      name: 's_seconds',
      help: 'h',
      labelNames,
      buckets: [0.001, 0.0025, 0.1, 1, 2.5],
      registers: [registry],
    });
    const counter = new Counter({ name: 's_total', help: 'h', labelNames, registers: [registry] });
    const histogramOf = histogramSeries(histogram, labelNames);
    const counterOf = counterSeries(counter, labelNames);
    // Calls that reach prom-client's own methods: only a series' first, when the series are used.
    let slowCalls = 0;
    const observe = histogram.observe.bind(histogram);
    histogram.observe = ((...args: Parameters<typeof observe>) => {
      slowCalls++;
      observe(...args);
    }) as typeof histogram.observe;
    const observations: Array<[string, string, number]> = [
      ['/a', 'POST', 0.0005],
      ['/a', 'POST', 0.001],
      ['/a', 'POST', 0.0011],
      ['/b', 'GET', 0.1],
      ['/a', 'POST', 2.5],
      ['/a', 'POST', 7],
      ['/b', 'GET', 0],
      ['/c"q', 'GET', 0.3],
    ];
    const apply = (route: string, method: string, value: number) => {
      if (fast) {
        histogramOf(route, method).observe(value);
        counterOf(route, method).inc(value * 10);
        counterOf(route, method).inc();
      } else {
        histogram.observe({ route, method }, value);
        counter.inc({ route, method }, value * 10);
        counter.inc({ route, method });
      }
    };
    for (const [route, method, value] of observations) apply(route, method, value);
    const before = await registry.metrics();
    const slowBeforeReset = slowCalls;
    // After a reset the series start again from nothing, as prom-client's own would.
    registry.resetMetrics();
    for (const [route, method, value] of observations.slice(2)) apply(route, method, value);
    return { before, after: await registry.metrics(), slowBeforeReset };
  };

  it('exports exactly what prom-client observe and inc export, across a reset', async () => {
    const fast = await exported(true);
    const slow = await exported(false);
    expect(fast.before).toBe(slow.before);
    expect(fast.after).toBe(slow.after);
    // Three series: the other five observations took the fast path.
    expect(fast.slowBeforeReset).toBe(3);
    expect(fast.before).toContain('s_seconds_bucket{le="0.001",route="/a",method="POST"} 2');
    expect(fast.before).toContain('s_seconds_count{route="/a",method="POST"} 5');
    expect(fast.after).toContain('s_seconds_count{route="/a",method="POST"} 3');
  });

  it('leaves refusals to prom-client', () => {
    const registry = new Registry();
    const histogram = new Histogram({ name: 'r_seconds', help: 'h', labelNames: ['a'], registers: [registry] });
    const counter = new Counter({ name: 'r_total', help: 'h', labelNames: ['a'], registers: [registry] });
    histogramSeries(histogram, ['a'])('x').observe(1);
    counterSeries(counter, ['a'])('x').inc(1);
    expect(() => histogramSeries(histogram, ['a'])('x').observe(Number.POSITIVE_INFINITY)).toThrow(TypeError);
    expect(() => counterSeries(counter, ['a'])('x').inc(-1)).toThrow('decrease');
  });
});
