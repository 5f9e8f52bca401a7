import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { createTestDatabase, hasPostgres } from '../support/database.ts';
import { gatewayEnv, hasRedis, startTestGateway, testNamespace } from '../support/gateway.ts';
import { eventually } from '../support/wait.ts';

const status = async (gateway: Gateway): Promise<any> => {
  const answer = (await (await fetch(`${gateway.url}/api/status`)).json()) as { data: unknown };
  return answer.data;
};

describe.skipIf(!hasPostgres() || !hasRedis())('two gateways on one Postgres and Redis', () => {
  let a: Gateway;
  let b: Gateway;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const database = await createTestDatabase();
    drop = database.drop;
    const env = gatewayEnv(database.options, testNamespace(), { SYNC_INTERVAL_SECONDS: '3600' });
    [a, b] = await Promise.all([startTestGateway(env), startTestGateway(env)]);
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await drop?.();
  });

  it('applies an option changed on one gateway on the other within a second', async () => {
    expect((await status(b)).system_name).toBe('Tollgate');
    const changed = Date.now();
    await a.options.set('SystemName', 'Gate Two');
    const seen = await eventually(
      () => status(b),
      (s) => s.system_name === 'Gate Two',
      1000,
    );
    expect(seen.system_name).toBe('Gate Two');
    expect(Date.now() - changed).toBeLessThan(1000);
  });

  it('sees setup done on the other gateway', async () => {
    const answer = await fetch(`${a.url}/api/setup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        username: 'root',
        password: 'password-1',
        confirmPassword: 'password-1',
        DemoSiteEnabled: true,
      }),
    });
    expect(answer.status).toBe(200);
    const seen = await eventually(
      () => status(b),
      (s) => s.setup && s.demo_site_enabled,
      1000,
    );
    expect(seen).toMatchObject({ setup: true, demo_site_enabled: true });
    const second = await fetch(`${b.url}/api/setup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'root2', password: 'password-2', confirmPassword: 'password-2' }),
    });
    expect(second.status).toBe(200);
  });
});
