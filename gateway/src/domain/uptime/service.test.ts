import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
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

  it('reads odd answers without trusting their types', async () => {
    const odd = createServer((request, response) => {
      response.setHeader('content-type', 'application/json');
      response.end(
        request.url?.includes('heartbeat')
          ? JSON.stringify({ heartbeatList: { 5: 'up' }, uptimeList: { '5_24': 'high' } })
          : JSON.stringify({ publicGroupList: [{ name: 9, monitorList: [{ id: 5, name: 42 }] }] }),
      );
    });
    await new Promise<void>((resolve) => odd.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(odd.address() as AddressInfo).port}`;
    try {
      const service = new UptimeService({ options: optionsWith([{ url, slug: 'x', categoryName: 'Odd' }]) });
      expect(await service.status()).toEqual([
        { categoryName: 'Odd', monitors: [{ name: '42', uptime: 0, status: 0, group: '9' }] },
      ]);
    } finally {
      odd.close();
    }
  });

  it('skips entries without a server or slug', async () => {
    const service = new UptimeService({ options: optionsWith([{ url: '', slug: 'p', categoryName: 'X' }]) });
    expect(await service.status()).toEqual([]);
  });
});
