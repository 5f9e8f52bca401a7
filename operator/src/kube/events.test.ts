import { describe, expect, it } from 'vitest';
import type { EventObject, Resource } from './client.ts';
import { EventRecorder, REPORTING_CONTROLLER } from './events.ts';

const channel: Resource = {
  apiVersion: 'tollgate.dev/v1alpha1',
  kind: 'Channel',
  metadata: { name: 'openai', namespace: 'ai', uid: 'uid-1' },
};

function recorder(fail = { next: false }) {
  let now = 1_000_000;
  const created: EventObject[] = [];
  const patched: Array<{ name: string; patch: Record<string, unknown> }> = [];
  const events = new EventRecorder({
    instance: 'operator-0_abc',
    clock: () => now,
    seriesIntervalMs: 60_000,
    kube: {
      async createEvent(_namespace, event) {
        if (fail.next) {
          fail.next = false;
          throw new Error('connection refused');
        }
        created.push(event);
        return event;
      },
      async patchEvent(_namespace, name, patch) {
        patched.push({ name, patch });
        return created[0]!;
      },
    },
  });
  return { events, created, patched, advance: (ms: number) => (now += ms) };
}

describe('EventRecorder', () => {
  it('creates one events.k8s.io Event per resource and reason, reported by the operator', async () => {
    const { events, created } = recorder();
    await events.record(channel, { type: 'Warning', reason: 'SecretNotFound', note: 'Secret openai-key not found' });
    expect(created).toHaveLength(1);
    expect(created[0]).toMatchObject({
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { namespace: 'ai' },
      reportingController: REPORTING_CONTROLLER,
      reportingInstance: 'operator-0_abc',
      action: 'Reconcile',
      reason: 'SecretNotFound',
      type: 'Warning',
      regarding: {
        apiVersion: 'tollgate.dev/v1alpha1',
        kind: 'Channel',
        namespace: 'ai',
        name: 'openai',
        uid: 'uid-1',
      },
    });
    expect(created[0]!.metadata.name).toMatch(/^openai\.[0-9a-f]{16}$/);
    expect(created[0]!.eventTime).toMatch(/\.\d{6}Z$/);
    await events.record(channel, { type: 'Warning', reason: 'InvalidSpec', note: 'bad' });
    expect(created.map((e) => e.reason)).toEqual(['SecretNotFound', 'InvalidSpec']);
  });

  it('aggregates a loop into one Event whose series count is written at most once per interval', async () => {
    const { events, created, patched, advance } = recorder();
    for (let i = 0; i < 20; i++) {
      await events.record(channel, { type: 'Warning', reason: 'Conflict', note: 'model taken' });
      advance(1_000);
    }
    expect(created).toHaveLength(1);
    expect(patched).toHaveLength(0);
    advance(60_000);
    await events.record(channel, { type: 'Warning', reason: 'Conflict', note: 'model taken' });
    expect(patched).toEqual([
      { name: created[0]!.metadata.name, patch: { series: { count: 21, lastObservedTime: expect.any(String) } } },
    ]);
  });

  it('drops a write that failed and tries again at the next occurrence; forgets a deleted resource', async () => {
    const fail = { next: true };
    const { events, created } = recorder(fail);
    await events.record(channel, { type: 'Warning', reason: 'Conflict', note: 'x' });
    expect(created).toHaveLength(0);
    await events.record(channel, { type: 'Warning', reason: 'Conflict', note: 'x' });
    expect(created).toHaveLength(1);
    events.forget('uid-1');
    await events.record(channel, { type: 'Warning', reason: 'Conflict', note: 'x' });
    expect(created).toHaveLength(2);
  });
});
