/**
 * Readiness follows the pod, not its dependencies: with its database refusing connections a gateway stays
 * in the Service (/readyz 200, status only) and keeps relaying for a key it knows, while the private
 * listener says what is wrong; the call made during the outage is logged once the database is back.
 */
import { once } from 'node:events';
import net, { type AddressInfo } from 'node:net';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { setupRoot } from '../support/client.ts';
import { createTestDatabase, hasPostgres } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts';
import { eventually } from '../support/wait.ts';

let gateway: Gateway | undefined;
let admin: pg.Client | undefined;
let upstream: MockOpenAI | undefined;
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  await gateway?.stop();
  await admin?.end();
  await upstream?.close();
  for (const cleanup of cleanups) await cleanup();
});

const json = async (url: string): Promise<any> => (await fetch(url)).json();
const databaseUp = async (metricsUrl: string) =>
  /^tollgate_dependency_up\{[^}]*dependency="database"[^}]*\} (\d)$/m.exec(
    await (await fetch(`${metricsUrl}/metrics`)).text(),
  )?.[1];

describe.skipIf(!hasPostgres())('probes and the private port', { timeout: 60_000 }, () => {
  it('stays ready with status only on /readyz and reports the failure on the private port', async () => {
    const database = await createTestDatabase();
    cleanups.push(database.drop);
    gateway = await startTestGateway(gatewayEnv(database.options, testNamespace()));
    expect(await databaseUp(gateway.metricsUrl)).toBe('1');
    // A key that has been used once, on a channel the gateway knows, with its quota leased.
    upstream = await startMockOpenAI();
    const root = await setupRoot(gateway.url);
    await gateway.options.setMany({ ModelRatio: JSON.stringify({ 'outage-model': 1 }) });
    const channel = await root.post('/api/channel/', {
      name: 'outage',
      type: 1,
      key: 'sk-upstream',
      base_url: upstream.url,
      models: 'outage-model',
      group: 'default',
    });
    expect(channel.body.success, JSON.stringify(channel.body)).toBe(true);
    const apiKey = (await root.post('/api/token/', { name: 'outage', unlimited_quota: true })).body.data.key;
    const chat = () =>
      fetch(`${gateway!.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'outage-model', messages: [{ role: 'user', content: 'hi' }] }),
      });
    expect((await chat()).status).toBe(200);

    // A real outage: Postgres refuses new connections to this database and drops the open ones.
    const name = new URL(database.url!).pathname.slice(1);
    const adminUrl = new URL(database.url!);
    adminUrl.pathname = '/postgres';
    admin = new pg.Client({ connectionString: adminUrl.toString() });
    await admin.connect();
    await admin.query(`alter database ${name} allow_connections false`);
    await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [name]);

    const details = await eventually(
      () => json(`${gateway!.metricsUrl}/health/details`),
      (d) => d.dependencies.database !== 'ok',
      10_000,
    );
    expect(details.dependencies.database).toMatch(/not currently accepting connections|terminat/);
    expect(details.status).toBe('ok');
    expect(await databaseUp(gateway.metricsUrl)).toBe('0');
    for (const base of [gateway.url, gateway.metricsUrl]) {
      const ready = await fetch(`${base}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.text()).toBe('{"status":"ok"}');
    }
    // What memory holds keeps being served: the cached key, the routing index and the leased quota.
    const during = await chat();
    expect(during.status, await during.clone().text()).toBe(200);

    await admin.query(`alter database ${name} allow_connections true`);
    expect(
      await eventually(
        () => json(`${gateway!.metricsUrl}/health/details`),
        (d) => d.dependencies.database === 'ok',
        10_000,
      ),
    ).toMatchObject({ dependencies: { database: 'ok' } });
    // The call served during the outage is on the books once the database is back: two consume logs.
    const logs = new pg.Client({ connectionString: database.url });
    await logs.connect();
    try {
      const consumed = async () =>
        Number((await logs.query('select count(*) as n from logs where type = 2')).rows[0].n as string);
      expect(await eventually(consumed, (n) => n === 2, 15_000)).toBe(2);
    } finally {
      await logs.end();
    }
  });

  it('stops both listeners, and refuses a private port already in use', async () => {
    const { url, metricsUrl } = gateway!;
    await gateway!.stop();
    for (const base of [url, metricsUrl]) await expect(fetch(`${base}/healthz`)).rejects.toThrow();

    const taken = net.createServer().listen(0, '127.0.0.1');
    await once(taken, 'listening');
    const { port } = taken.address() as AddressInfo;
    try {
      await expect(
        startTestGateway({ PORT: '0', HOST: '127.0.0.1', METRICS_PORT: String(port), DATA_DIR: 'memory://' }),
      ).rejects.toThrow(`METRICS_PORT ${port} on 127.0.0.1 is already in use`);
    } finally {
      taken.close();
    }
  });
});
