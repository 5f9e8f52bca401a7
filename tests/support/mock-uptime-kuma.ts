import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface MockMonitor {
  id: number;
  name: string;
  /** Heartbeat statuses, oldest first (0 down, 1 up, 2 pending, 3 maintenance). */
  beats: number[];
  /** 24-hour uptime, 0-1. */
  uptime: number;
}

export interface MockStatusPage {
  /** Groups of the page, each with its monitors. */
  groups: Array<{ name: string; monitors: MockMonitor[] }>;
}

export interface MockUptimeKuma {
  url: string;
  pages: Map<string, MockStatusPage>;
  /** Calls per path, to see caching. */
  calls: string[];
  /** Milliseconds to wait before answering (a slow server). */
  delayMs: number;
  close(): Promise<void>;
}

/**
 * Uptime Kuma's two public status-page calls: GET /api/status-page/:slug (the page and its groups of
 * monitors) and GET /api/status-page/heartbeat/:slug (heartbeats per monitor id, oldest first, and
 * uptimes keyed `<id>_24`). An unknown slug is a 404.
 */
export async function startMockUptimeKuma(): Promise<MockUptimeKuma> {
  const mock: MockUptimeKuma = { url: '', pages: new Map(), calls: [], delayMs: 0, close: async () => {} };
  const server = createServer(async (request, response) => {
    const path = new URL(request.url ?? '/', 'http://kuma').pathname;
    mock.calls.push(path);
    if (mock.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, mock.delayMs));
    const send = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    const heartbeat = /^\/api\/status-page\/heartbeat\/([^/]+)$/.exec(path);
    const statusPage = /^\/api\/status-page\/([^/]+)$/.exec(path);
    const slug = decodeURIComponent((heartbeat ?? statusPage)?.[1] ?? '');
    const page = mock.pages.get(slug);
    if (!page || request.method !== 'GET') {
      send(404, { ok: false, msg: 'Not Found' });
      return;
    }
    const monitors = page.groups.flatMap((g) => g.monitors);
    if (heartbeat) {
      send(200, {
        heartbeatList: Object.fromEntries(
          monitors.map((m) => [
            String(m.id),
            m.beats.map((status, i) => ({ status, time: `2026-11-27 0${i}:00:00.000`, msg: '', ping: 20 })),
          ]),
        ),
        uptimeList: Object.fromEntries(monitors.map((m) => [`${m.id}_24`, m.uptime])),
      });
      return;
    }
    send(200, {
      config: { slug, title: slug, description: null, icon: '/icon.svg', theme: 'auto', published: true },
      incident: null,
      publicGroupList: page.groups.map((g, i) => ({
        id: i + 1,
        name: g.name,
        weight: i + 1,
        monitorList: g.monitors.map((m) => ({ id: m.id, name: m.name, sendUrl: 0, type: 'http' })),
      })),
      maintenanceList: [],
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  mock.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  mock.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return mock;
}
