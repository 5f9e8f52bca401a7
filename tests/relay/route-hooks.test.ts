/**
 * Cookies are a console matter (the session, OAuth state): the relay's routes, which authenticate by
 * key, neither parse nor write them, while the console's routes still set and read them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';

let gateway: Gateway;
let drop: () => Promise<void>;

beforeAll(async () => {
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(gatewayEnv(database.options, testNamespace()));
});
afterAll(async () => {
  await gateway?.stop();
  await drop?.();
});

/** Each route of the app ("/path (METHODS)") with the hook lines Fastify prints under it. */
function routeHooks(app: Gateway['app']): Map<string, string> {
  const routes = new Map<string, string>();
  // The printout is a tree of path segments, four columns per level: the stack holds the segments above.
  const stack: string[] = [];
  let current: string | undefined;
  for (const line of app.printRoutes({ includeHooks: true }).split('\n')) {
    const node = /^(.*?)[├└]── (\S+)(?: (\([^)]*\)))?/.exec(line);
    if (node) {
      const depth = (node[1] ?? '').length / 4;
      stack.length = depth;
      stack.push(node[2] ?? '');
      current = node[3] ? `${stack.join('')} ${node[3]}` : undefined;
      if (current) routes.set(current, '');
    } else if (current && line.includes('•')) {
      routes.set(current, `${routes.get(current)}${line.trim()}\n`);
    }
  }
  return routes;
}

describe('route hooks', () => {
  it('keeps cookie handling off the relay routes, and on the console routes that sign in', async () => {
    const routes = routeHooks(gateway.app);
    const hooksOf = (path: string, method: string) => {
      const found = [...routes].find(([route]) => route.startsWith(`${path} (`) && route.includes(method));
      if (!found) throw new Error(`no route ${method} ${path}`);
      return found[1];
    };
    for (const path of ['/v1/chat/completions', '/v1/messages', '/v1/embeddings', '/v1/responses']) {
      expect(hooksOf(path, 'POST')).not.toMatch(/cookie/i);
    }
    expect(hooksOf('/api/user/login', 'POST')).toMatch(/fastifyCookieOnSendHandler/);

    // Sessions still work end to end: sign in sets the cookie, which then authenticates, and sign out ends it.
    const root = await setupRoot(gateway.url);
    expect((await root.get('/api/user/self')).status).toBe(200);
    const browser = new DashboardClient(gateway.url);
    browser.cookie = root.cookie;
    browser.userId = root.userId;
    expect((await browser.get('/api/user/logout')).body.success).toBe(true);
    expect((await root.get('/api/user/self')).status).toBe(401);
  });

  it('answers 503 in the caller’s shape while draining, except the probes, and refuses an unknown Content-Encoding', async () => {
    const compressed = await fetch(`${gateway.url}/api/user/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'rot13' },
      body: '{}',
    });
    expect(await compressed.json()).toMatchObject({ success: false, code: 'UNSUPPORTED_CONTENT_ENCODING' });
    gateway.health.draining();
    try {
      const relay = await fetch(`${gateway.url}/v1/chat/completions`, { method: 'POST', body: '{}' });
      expect(relay.status).toBe(503);
      expect(relay.headers.get('x-request-id')).toBeTruthy();
      expect(await relay.json()).toMatchObject({ error: { code: 'server_draining' } });
      const api = await fetch(`${gateway.url}/api/status`);
      expect(api.status).toBe(503);
      expect(await api.json()).toMatchObject({ success: false });
      expect((await fetch(`${gateway.url}/healthz`)).status).toBe(200);
    } finally {
      gateway.health.serving();
    }
  });
});
