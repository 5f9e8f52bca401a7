import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockUptimeKuma, startMockUptimeKuma } from '../../../../tests/support/mock-uptime-kuma.ts';
import { UptimeService } from './service.ts';

let kuma: MockUptimeKuma;
beforeAll(async () => {
  kuma = await startMockUptimeKuma();
  kuma.pages.set('p', { groups: [{ name: 'G', monitors: [{ id: 7, name: 'M', beats: [1], uptime: 1 }] }] });
});
afterAll(() => kuma.close());

const optionsWith = (groups: unknown[], enabled = true) => ({
  getJson: <T>() => groups as T,
  getBoolean: () => enabled,
});

describe('UptimeService', () => {
  it('gives a page that does not answer in time no monitors, without holding the others', async () => {
    kuma.delayMs = 500;
    const service = new UptimeService({
      options: optionsWith([{ url: kuma.url, slug: 'p', categoryName: 'Slow' }]),
      timeoutMs: 50,
    });
    const started = Date.now();
    expect(await service.status()).toEqual([{ categoryName: 'Slow', monitors: [] }]);
    expect(Date.now() - started).toBeLessThan(450);
    kuma.delayMs = 0;
  });

  it('reuses an answer within the cache time and fetches again after it', async () => {
    let now = 1_000_000;
    const service = new UptimeService({
      options: optionsWith([{ url: kuma.url, slug: 'p', categoryName: 'C' }]),
      cacheMs: 1000,
      now: () => now,
    });
    const first = await service.status();
    expect(first[0]!.monitors).toEqual([{ name: 'M', uptime: 1, status: 1, group: 'G' }]);
    const calls = kuma.calls.length;
    now += 999;
    await service.status();
    expect(kuma.calls.length).toBe(calls);
    now += 2;
    await service.status();
    expect(kuma.calls.length).toBe(calls + 2);
  });

  it('fetches nothing while the panel is off', async () => {
    const calls = kuma.calls.length;
    const service = new UptimeService({
      options: optionsWith([{ url: kuma.url, slug: 'p', categoryName: 'C' }], false),
    });
    expect(await service.status()).toEqual([]);
    expect(kuma.calls.length).toBe(calls);
  });

  it('skips entries without a server or slug', async () => {
    const service = new UptimeService({ options: optionsWith([{ url: '', slug: 'p', categoryName: 'X' }]) });
    expect(await service.status()).toEqual([]);
  });
});
