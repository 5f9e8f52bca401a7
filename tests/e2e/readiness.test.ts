/**
 * Readiness follows the pod, not its dependencies: with its database refusing connections a gateway stays
 * in the Service (/readyz 200, status only), while the private listener says what is wrong.
 */
import { once } from 'node:events';
import net, { type AddressInfo } from 'node:net';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { createTestDatabase, hasPostgres } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { eventually } from '../support/wait.ts';

let gateway: Gateway | undefined;
let admin: pg.Client | undefined;
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  await gateway?.stop();
  await admin?.end();
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

    await admin.query(`alter database ${name} allow_connections true`);
    expect(
      await eventually(
        () => json(`${gateway!.metricsUrl}/health/details`),
        (d) => d.dependencies.database === 'ok',
        10_000,
      ),
    ).toMatchObject({ dependencies: { database: 'ok' } });
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
