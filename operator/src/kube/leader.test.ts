import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../tests/support/wait.ts';
import type { LeaseObject } from './client.ts';
import { LeaderElector, type LeaseApi, microTime } from './leader.ts';

class Conflict extends Error {
  statusCode = 409;
}

/** A call that never answers, until its signal aborts it (as a hung connection to the API server). */
const hang = (signal?: AbortSignal) =>
  new Promise<never>((_resolve, reject) => signal?.addEventListener('abort', () => reject(signal.reason)));

/**
 * One Lease in memory with the API server's optimistic locking; `down` makes a caller's calls fail,
 * `hung` makes them never answer.
 */
function fakeLeases() {
  let lease: LeaseObject | undefined;
  let version = 0;
  const api = (caller: { down: boolean; hung?: boolean }): LeaseApi => ({
    async readLease(_ns, _name, signal) {
      if (caller.hung) return hang(signal);
      if (caller.down) throw new Error('connection refused');
      return lease && structuredClone(lease);
    },
    async createLease(_ns, body) {
      if (caller.down) throw new Error('connection refused');
      if (lease) throw new Conflict();
      lease = { ...structuredClone(body), metadata: { ...body.metadata, resourceVersion: String(++version) } };
      return structuredClone(lease);
    },
    async replaceLease(_ns, body) {
      if (caller.down) throw new Error('connection refused');
      if (!lease || body.metadata.resourceVersion !== lease.metadata.resourceVersion) throw new Conflict();
      lease = { ...structuredClone(body), metadata: { ...body.metadata, resourceVersion: String(++version) } };
      return structuredClone(lease);
    },
  });
  const seed = (spec: LeaseObject['spec']) => {
    lease = { metadata: { name: 'tollgate-operator', namespace: 'ops', resourceVersion: String(++version) }, spec };
  };
  return { api, current: () => lease, seed };
}

const electors: LeaderElector[] = [];
afterEach(async () => {
  for (const elector of electors.splice(0)) await elector.stop();
});

function candidate(api: LeaseApi, identity: string, clock: () => number) {
  const events: string[] = [];
  const elector = new LeaderElector({
    api,
    namespace: 'ops',
    name: 'tollgate-operator',
    identity,
    retryPeriodMs: 5,
    clock,
    onStartedLeading: () => events.push('started'),
    onStoppedLeading: () => {
      events.push('stopped');
    },
  });
  electors.push(elector);
  elector.start();
  return { elector, events };
}

describe('LeaderElector', () => {
  it('formats MicroTime with six fractional digits', () => {
    expect(microTime(Date.UTC(2025, 0, 2, 3, 4, 5, 678))).toBe('2025-01-02T03:04:05.678000Z');
  });

  it('elects one leader; the other takes over only after the lease lapses, and the old one steps down', async () => {
    let now = 1_000_000;
    const clock = () => now;
    const leases = fakeLeases();
    const a = { down: false };
    const first = candidate(leases.api(a), 'a', clock);
    await waitFor(() => first.elector.isLeader);
    const second = candidate(leases.api({ down: false }), 'b', clock);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(second.elector.isLeader).toBe(false);
    expect(leases.current()?.spec?.holderIdentity).toBe('a');

    // a can no longer reach the API server: its claim lapses after the lease duration.
    a.down = true;
    await new Promise((resolve) => setTimeout(resolve, 30));
    now += 14_000;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(second.elector.isLeader).toBe(false);
    expect(first.events).toEqual(['started', 'stopped']); // past the 10 s renew deadline
    now += 2_000;
    await waitFor(() => second.elector.isLeader);
    expect(leases.current()?.spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
    expect(first.elector.isLeader).toBe(false);
  });

  it('releases the Lease on stop, so a successor takes it at once', async () => {
    const leases = fakeLeases();
    const clock = () => 5_000_000;
    const first = candidate(leases.api({ down: false }), 'a', clock);
    await waitFor(() => first.elector.isLeader);
    const second = candidate(leases.api({ down: false }), 'b', clock);
    await first.elector.stop();
    expect(first.events).toEqual(['started', 'stopped']);
    await waitFor(() => second.elector.isLeader);
    expect(leases.current()?.spec?.holderIdentity).toBe('b');
  });

  it('judges expiry by when it saw the record change, not by the remote renewTime', async () => {
    let now = 2_000_000;
    const leases = fakeLeases();
    // A holder whose renewTime (by another node's clock) is an hour old: still live until this
    // process has watched the record stay unchanged for a whole lease duration.
    leases.seed({ holderIdentity: 'x', leaseDurationSeconds: 15, renewTime: microTime(now - 3_600_000) });
    const b = candidate(leases.api({ down: false }), 'b', () => now);
    await waitFor(() => b.elector.isLeader === false && leases.current()?.spec?.holderIdentity === 'x');
    await new Promise((resolve) => setTimeout(resolve, 30));
    now += 14_000;
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(b.elector.isLeader).toBe(false);
    // A renewal the holder writes (a new renewTime) restarts the local count, whatever its value says.
    leases.seed({ holderIdentity: 'x', leaseDurationSeconds: 15, renewTime: microTime(now - 7_200_000) });
    await new Promise((resolve) => setTimeout(resolve, 30));
    now += 14_000;
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(b.elector.isLeader).toBe(false);
    now += 2_000;
    await waitFor(() => b.elector.isLeader);
    expect(leases.current()?.spec?.holderIdentity).toBe('b');
  });

  it('steps down when Lease calls hang past the renew deadline (each call is aborted)', async () => {
    let now = 3_000_000;
    const leases = fakeLeases();
    const caller = { down: false, hung: false };
    const a = candidate(leases.api(caller), 'a', () => now);
    await waitFor(() => a.elector.isLeader);
    caller.hung = true;
    now += 11_000; // past the 10 s renew deadline: the hung call is aborted at once
    await waitFor(() => a.events.includes('stopped'));
    expect(a.elector.isLeader).toBe(false);
  });
});
