import { describe, expect, it } from 'vitest';
import type { OptionsService } from '../../domain/options/index.ts';
import { routeHeaderValue, routeTrace, wantsRouteHeader } from './route-trace.ts';

const options = (routeHeader: boolean) => ({ getBoolean: () => routeHeader }) as unknown as OptionsService;

describe('route trace', () => {
  it('says how the channel was picked, in the log and in the header', () => {
    const trace = routeTrace(
      {
        channelId: 7,
        group: 'vip group',
        priority: 3,
        reason: { how: 'weighted', priority: 3, weight: 2, tierWeight: 10, circuitsSkipped: [4] },
      },
      1,
      [4, 5, 4],
      true,
    );
    expect(trace).toEqual({
      channel: 7,
      group: 'vip group',
      priority: 3,
      how: 'weighted',
      weight: 2,
      tier_weight: 10,
      retry: 1,
      circuits_skipped: [4, 5],
      probe: true,
    });
    expect(routeHeaderValue(trace)).toBe(
      'channel=7; group=vip%20group; priority=3; pick=weighted; weight=2/10; retry=1; circuits_skipped=4,5; probe=1',
    );
    const pinned = routeTrace({ channelId: 2, group: 'default', priority: 0, reason: 'pinned' }, 0, [], false);
    expect(routeHeaderValue(pinned)).toBe('channel=2; group=default; priority=0; pick=pinned; retry=0');
  });

  it('is sent to administrators who ask, or to everyone when the option says so', () => {
    const asked = { 'x-tollgate-debug': 'timing, route' };
    expect(wantsRouteHeader(asked, 10, options(false))).toBe(true);
    expect(wantsRouteHeader(asked, 1, options(false))).toBe(false);
    expect(wantsRouteHeader({}, 100, options(false))).toBe(false);
    expect(wantsRouteHeader({}, 1, options(true))).toBe(true);
  });
});
