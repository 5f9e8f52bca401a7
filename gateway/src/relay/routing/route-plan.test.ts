import { describe, expect, it } from 'vitest';
import type { RoutingIndex } from './index-cache.ts';
import { buildTiers } from './picker.ts';
import { RoutePlan, type RoutePlanInput } from './route-plan.ts';
import { seededRandom, snapshot } from './test-support.ts';

/** A routing index holding these channels per group (RoutePlan only asks for candidates). */
function routing(groups: Record<string, number[]>): RoutingIndex {
  return {
    candidates: (group: string) => buildTiers((groups[group] ?? []).map((id) => snapshot(id))),
  } as unknown as RoutingIndex;
}

function plan(input: Partial<RoutePlanInput> & Pick<RoutePlanInput, 'routing' | 'groups'>): RoutePlan {
  return new RoutePlan({
    crossGroup: false,
    retries: 0,
    model: 'gpt-4o',
    format: 'openai-chat',
    random: seededRandom(7),
    ...input,
  });
}

/** Every pick until the plan is spent, as "group:channel". */
function walk(route: RoutePlan): string[] {
  const picks: string[] = [];
  for (let pick = route.next(); pick; pick = route.next()) picks.push(`${pick.group}:${pick.channel.id}`);
  return picks;
}

describe('the route plan', () => {
  it('gives each group RetryTimes + 1 attempts, never a channel twice, and stays in the first without cross-group retry', () => {
    const index = routing({ a: [1, 2, 3], b: [4] });
    expect(walk(plan({ routing: index, groups: ['a', 'b'], retries: 1 }))).toHaveLength(2);
    const all = walk(plan({ routing: index, groups: ['a', 'b'], retries: 5 }));
    expect(all.map((p) => p.split(':')[0])).toEqual(['a', 'a', 'a']);
    expect(new Set(all).size).toBe(3);
  });

  it('hands the next attempt to the next group once a group has used its attempts (cross-group retry)', () => {
    const index = routing({ a: [1, 2], b: [3, 4], c: [] });
    const route = plan({ routing: index, groups: ['a', 'b'], crossGroup: true, retries: 0 });
    expect(route.remainingRetries()).toBe(2);
    const first = route.next();
    expect(first?.group).toBe('a');
    expect(route.remainingRetries()).toBe(1);
    expect(route.next()?.group).toBe('b');
    expect(route.remainingRetries()).toBe(0);
    expect(route.next()).toBeUndefined();
    // A group with no untried channel left hands over too, before its attempts are used.
    expect(walk(plan({ routing: index, groups: ['a', 'b'], crossGroup: true, retries: 5 })).map((p) => p[0])).toEqual([
      'a',
      'a',
      'b',
      'b',
    ]);
  });

  it('tries the remembered channel first when a group offers it, and never when none does', () => {
    const index = routing({ a: [1, 2, 3], b: [4] });
    const route = plan({ routing: index, groups: ['a'], retries: 2, preferred: 2 });
    expect(route.preferredAvailable()).toBe(true);
    expect(route.next()).toMatchObject({ group: 'a', preferred: true, channel: { id: 2 } });
    expect(route.next()?.preferred).toBe(false);

    const elsewhere = plan({ routing: index, groups: ['a', 'b'], crossGroup: true, preferred: 4 });
    expect(elsewhere.next()).toMatchObject({ group: 'b', channel: { id: 4 }, preferred: true });
    // Without cross-group retry only the first group is walked: a channel of the second is no candidate.
    const gone = plan({ routing: index, groups: ['a', 'b'], preferred: 4 });
    expect(gone.preferredAvailable()).toBe(false);
    expect(gone.next()).toMatchObject({ group: 'a', preferred: false });
    expect(plan({ routing: index, groups: ['a'], preferred: 99 }).preferredAvailable()).toBe(false);
  });

  it('never picks a channel of a protocol the request cannot use, and moves on when a group has no other', () => {
    const index = routing({ a: [1, 2], b: [3, 4] });
    const speaks = (channel: { id: number }) => channel.id % 2 === 0;
    const route = plan({ routing: index, groups: ['a', 'b'], crossGroup: true, retries: 5, accepts: speaks });
    expect(walk(route)).toEqual(['a:2', 'b:4']);
    expect(walk(plan({ routing: index, groups: ['a', 'b'], accepts: () => false }))).toEqual([]);
  });
});

describe('the route plan with circuits', () => {
  it('passes channels with open circuits over and says so', () => {
    const index = routing({ a: [1, 2, 3] });
    const open = new Map([[1, 100]]);
    const route = plan({ routing: index, groups: ['a'], retries: 5, blockedSince: (channel) => open.get(channel.id) });
    const first = route.next();
    expect(first?.channel.id).not.toBe(1);
    expect(first?.reason.circuitsSkipped).toEqual([1]);
    expect(first?.reason.how).toBe('weighted');
    const second = route.next();
    expect(second?.reason.how).toBe('only');
    // With every other candidate tried, the open channel is the fallback.
    expect(route.next()?.reason.how).toBe('circuit_fallback');
  });

  it('falls back to the channel whose circuits opened longest ago when every candidate is open', () => {
    const index = routing({ a: [1, 2, 3] });
    const open = new Map([
      [1, 300],
      [2, 100],
      [3, 200],
    ]);
    const route = plan({ routing: index, groups: ['a'], retries: 5, blockedSince: (channel) => open.get(channel.id) });
    const picks = [route.next(), route.next(), route.next()];
    expect(picks.map((p) => p?.channel.id)).toEqual([2, 3, 1]);
    expect(picks.every((p) => p?.reason.how === 'circuit_fallback')).toBe(true);
  });

  it('gives a pick back without spending an attempt', () => {
    const index = routing({ a: [1, 2] });
    const route = plan({ routing: index, groups: ['a'], retries: 0 });
    const first = route.next();
    expect(first).toBeDefined();
    route.putBack(first!);
    expect(route.remainingRetries()).toBe(1);
    expect(route.next()).toBeDefined();
    expect(route.next()).toBeUndefined();
  });
});
