import { describe, expect, it } from 'vitest';
import { PodHealth } from './health.ts';
import { createMetrics } from './metrics.ts';

const gaugeValues = async (metrics: ReturnType<typeof createMetrics>) =>
  Object.fromEntries(
    (await metrics.dependencyUp.get()).values.map((v) => [String(v.labels.dependency), v.value] as const),
  );

describe('pod health', () => {
  it('is ready only while serving: unavailable while starting, then waiting for the schema, then draining', () => {
    const health = new PodHealth(createMetrics({ version: 't', node: 'n' }).dependencyUp);
    expect(health.readiness()).toBe('unavailable');
    health.schemaChecked({ pending: ['0004_next'], newer: [] });
    expect(health.readiness()).toBe('waiting-for-schema');
    health.schemaChecked({ pending: [], newer: [] });
    expect(health.readiness()).toBe('waiting-for-schema');
    health.serving();
    expect(health.readiness()).toBe('ok');
    expect(health.isDraining).toBe(false);
    health.draining();
    expect(health.readiness()).toBe('draining');
    expect(health.isDraining).toBe(true);
  });

  it('reports each dependency with its error text and sets the gauge, without touching readiness', async () => {
    const metrics = createMetrics({ version: 't', node: 'n' });
    const health = new PodHealth(metrics.dependencyUp, 50);
    health.addDependency({ name: 'database', check: async () => {} });
    health.addDependency({
      name: 'redis',
      check: async () => {
        throw new Error('connect ECONNREFUSED 127.0.0.1:6390');
      },
    });
    health.addDependency({ name: 'slow', check: () => new Promise(() => {}) });
    health.serving();
    expect(await health.details()).toEqual({
      status: 'ok',
      dependencies: { database: 'ok', redis: 'connect ECONNREFUSED 127.0.0.1:6390', slow: 'no answer within 50 ms' },
    });
    expect(await gaugeValues(metrics)).toEqual({ database: 1, redis: 0, slow: 0 });
    expect(health.readiness()).toBe('ok');
  });
});
