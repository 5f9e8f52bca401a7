import { afterAll, describe, expect, it } from 'vitest';
import { DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase, hasPostgres } from '../support/database.ts';
import { type GatewayProcess, gatewayEnv, hasRedis, spawnGateway, testNamespace } from '../support/gateway.ts';

const running: GatewayProcess[] = [];
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const p of running) if (p.child.exitCode === null) await p.stop();
  for (const cleanup of cleanups) await cleanup();
});

/** The same signed-in browser, talking to another pod: same cookie, same user id header. */
function sameBrowserOn(url: string, from: DashboardClient): DashboardClient {
  const other = new DashboardClient(url, from.headers);
  other.cookie = from.cookie;
  other.userId = from.userId;
  return other;
}

describe.skipIf(!hasPostgres() || !hasRedis())('sessions and limits across two gateway processes', () => {
  it('a sign-in on A works on B; sign-out, password change and a ban on one reach the other', async () => {
    const database = await createTestDatabase();
    cleanups.push(database.drop);
    const env = gatewayEnv(database.options, testNamespace(), {});
    const [a, b] = await Promise.all([spawnGateway(env), spawnGateway(env)]);
    running.push(a!, b!);
    const rootOnA = await setupRoot(a!.url);
    const register = await rootOnA.post('/api/user/', { username: 'walker', password: 'password-1' });
    expect(register.body.success).toBe(true);

    const onA = new DashboardClient(a!.url);
    expect((await onA.login('walker', 'password-1')).body.success).toBe(true);
    const onB = sameBrowserOn(b!.url, onA);
    expect((await onB.get('/api/user/self')).body.data.username).toBe('walker');

    expect((await onB.get('/api/user/logout')).body.success).toBe(true);
    expect((await onA.get('/api/user/self')).status).toBe(401);

    // A ban on B ends the session that was opened on A.
    await onA.login('walker', 'password-1');
    expect((await onA.get('/api/user/self')).status).toBe(200);
    const rootOnB = sameBrowserOn(b!.url, rootOnA);
    expect((await rootOnB.post('/api/user/manage', { id: onA.userId, action: 'disable' })).body.data.status).toBe(2);
    expect((await onA.get('/api/user/self')).status).toBe(401);
    await rootOnB.post('/api/user/manage', { id: onA.userId, action: 'enable' });

    // A password change on A signs the user out on B (another browser) too.
    const other = new DashboardClient(b!.url);
    await other.login('walker', 'password-1');
    await onA.login('walker', 'password-1');
    expect(
      (await onA.put('/api/user/self', { original_password: 'password-1', password: 'password-2' })).body.success,
    ).toBe(true);
    expect((await other.get('/api/user/self')).status).toBe(401);
    expect((await sameBrowserOn(b!.url, onA).get('/api/user/self')).status).toBe(200);

    expect(await a!.stop()).toBe(0);
    expect(await b!.stop()).toBe(0);
  });

  it('counts the per-IP sign-in limit across both processes', async () => {
    const database = await createTestDatabase();
    cleanups.push(database.drop);
    const env = gatewayEnv(database.options, testNamespace(), { CRITICAL_RATE_LIMIT: '4' });
    const [a, b] = await Promise.all([spawnGateway(env), spawnGateway(env)]);
    running.push(a!, b!);
    const attempt = (url: string) =>
      new DashboardClient(url).post('/api/user/login', { username: 'x', password: 'wrong-pass' });
    const statuses = [];
    for (const url of [a!.url, b!.url, a!.url, b!.url, a!.url, b!.url]) statuses.push((await attempt(url)).status);
    // A wrong password is a refusal in the envelope (HTTP 200), never a 401 that would end the session.
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
    const limited = await attempt(a!.url);
    expect(limited.body).toMatchObject({ success: false, code: 'RATE_LIMITED' });
    expect(await a!.stop()).toBe(0);
    expect(await b!.stop()).toBe(0);
  });
});
