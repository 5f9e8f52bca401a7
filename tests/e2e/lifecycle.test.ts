import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { migrations } from '../../gateway/src/store/migrations/index.ts';
import { createTestDatabase, hasPostgres } from '../support/database.ts';
import { type GatewayProcess, gatewayEnv, spawnGateway, testNamespace } from '../support/gateway.ts';
import { waitFor } from '../support/wait.ts';

const running: GatewayProcess[] = [];
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const p of running) if (p.child.exitCode === null) await p.stop('SIGKILL');
  for (const cleanup of cleanups) await cleanup();
});

async function start(env: Record<string, string>) {
  const gateway = await spawnGateway(env);
  running.push(gateway);
  return gateway;
}

const json = async (url: string, init?: RequestInit): Promise<any> => (await fetch(url, init)).json();
const setup = (url: string) =>
  json(`${url}/api/setup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'root', password: 'a-good-password', confirmPassword: 'a-good-password' }),
  });

/** Starts, sets up, stops with SIGTERM (exit 0), restarts and finds the data still there. */
async function setupSurvivesRestart(env: Record<string, string>) {
  // How fast it starts is the benchmarks' business (a timed assertion failed on a busy CI machine).
  const first = await start(env);
  expect((await json(`${first.url}/api/status`)).data.setup).toBe(false);
  expect(await setup(first.url)).toMatchObject({ success: true });
  expect((await json(`${first.url}/api/status`)).data.setup).toBe(true);
  expect(await first.stop()).toBe(0);
  // Logged lines reach the pipe before the process exits, but may be read just after its exit event.
  await waitFor(() => first.logs.some((l) => l.msg === 'shutdown complete'));

  const second = await start(env);
  expect((await json(`${second.url}/api/status`)).data.setup).toBe(true);
  expect((await json(`${second.url}/api/setup`)).data).toMatchObject({ status: true, root_init: true });
  expect((await setup(second.url)).success).toBe(false);
  expect(await second.stop()).toBe(0);
}

// Real processes on the embedded database: slow to start on a busy 2-core machine.
describe('gateway process', { timeout: 120_000 }, () => {
  it('runs with no configuration on the embedded database and keeps its data across a restart', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'tollgate-e2e-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    await setupSurvivesRestart({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir });
  });

  it('answers probes on both ports, metrics and details only on the private one, and echoes request ids', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'tollgate-e2e-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const gateway = await start({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir });
    expect(gateway.metricsUrl).not.toBe(gateway.url);
    for (const base of [gateway.url, gateway.metricsUrl]) {
      expect(await json(`${base}/healthz`)).toEqual({ status: 'ok' });
      expect(await json(`${base}/readyz`)).toEqual({ status: 'ok' });
    }
    expect(await json(`${gateway.metricsUrl}/health/details`)).toEqual({
      status: 'ok',
      dependencies: { database: 'ok', cluster: 'ok' },
      schema: { pending: [], newer: [] },
    });
    for (const hidden of ['/metrics', '/health/details']) {
      const answer = await fetch(`${gateway.url}${hidden}`);
      expect(answer.status, hidden).toBe(404);
      expect(await answer.json()).toMatchObject({ success: false });
    }
    const traced = await fetch(`${gateway.url}/api/status`, { headers: { 'x-request-id': 'trace-123' } });
    expect(traced.headers.get('x-request-id')).toBe('trace-123');
    const generated = await fetch(`${gateway.url}/api/status`, { headers: { 'x-request-id': 'has spaces & symbols' } });
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f]{32}$/);
    const metrics = await (await fetch(`${gateway.metricsUrl}/metrics`)).text();
    expect(metrics).toMatch(
      /http_server_request_duration_seconds_count\{[^}]*route="\/api\/status"[^}]*method="GET"[^}]*status="200"[^}]*\} 2/,
    );
    expect(metrics).toContain('process_resident_memory_bytes');
    expect(metrics).toMatch(/tollgate_build_info\{[^}]*version="0\.1\.0"[^}]*\} 1/);
    expect(metrics).toMatch(/tollgate_dependency_up\{[^}]*dependency="database"[^}]*\} 1/);
    expect(metrics).not.toContain('route="/metrics"');
    expect(await gateway.stop()).toBe(0);
    // Log lines are written asynchronously: after a clean stop every access line is out.
    await waitFor(() => gateway.logs.some((l) => l.request_id === 'trace-123'));
    expect(gateway.logs.find((l) => l.request_id === 'trace-123')).toMatchObject({
      msg: 'request completed',
      url: '/api/status',
      statusCode: 200,
    });
  });

  it('refuses to start with invalid configuration, saying what is wrong', async () => {
    await expect(spawnGateway({ PORT: 'eighty' }, 5000)).rejects.toThrow(/PORT must be an integer/);
    await expect(spawnGateway({ PORT: '0', DATABASE_URL: 'mysql://x' }, 5000)).rejects.toThrow(
      /DATABASE_URL must start with postgres/,
    );
  });
});

describe.skipIf(!hasPostgres())('gateway process on Postgres and Redis', { timeout: 120_000 }, () => {
  it('keeps its data in Postgres across a restart', async () => {
    const database = await createTestDatabase();
    cleanups.push(database.drop);
    await setupSurvivesRestart(gatewayEnv(database.options, testNamespace()));
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const tables = await client.query(`select tablename from pg_tables where schemaname = 'public'`);
      expect(tables.rows.map((r) => r.tablename)).toEqual(
        expect.arrayContaining(['users', 'channels', 'logs', 'quota_leases']),
      );
      const root = await client.query('select username, role, quota from users');
      expect(root.rows).toEqual([{ username: 'root', role: 100, quota: '100000000' }]);
    } finally {
      await client.end();
    }
  });

  it('two processes started at once on an empty database both come up and migrate once', async () => {
    const database = await createTestDatabase();
    cleanups.push(database.drop);
    const env = gatewayEnv(database.options, testNamespace());
    const [a, b] = await Promise.all([start(env), start(env)]);
    for (const gateway of [a!, b!]) expect(await json(`${gateway.url}/readyz`)).toEqual({ status: 'ok' });
    const appliedBy = [a!, b!].filter((g) => g.logs.some((l) => l.msg === 'migrations applied'));
    expect(appliedBy).toHaveLength(1);
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const ran = await client.query('select name from tollgate_migrations order by name');
      expect(ran.rows.map((r) => r.name)).toEqual(Object.keys(migrations));
    } finally {
      await client.end();
    }
    expect(await a!.stop()).toBe(0);
    expect(await b!.stop()).toBe(0);
  });

  it('migrates with `node gateway/src/migrate.ts` and exits, for the chart’s migration job', async () => {
    const database = await createTestDatabase();
    cleanups.push(database.drop);
    const env = gatewayEnv(database.options, testNamespace());
    const run = () =>
      new Promise<number | null>((resolve) => {
        const child = spawn(process.execPath, ['gateway/src/migrate.ts'], {
          env: { PATH: process.env.PATH ?? '', ...env },
          stdio: 'ignore',
        });
        child.once('exit', resolve);
      });
    expect(await run()).toBe(0);
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const ran = await client.query('select name from tollgate_migrations order by name');
      expect(ran.rows.map((r) => r.name)).toEqual(Object.keys(migrations));
    } finally {
      await client.end();
    }
    // Nothing left to do: a second run succeeds too.
    expect(await run()).toBe(0);
  });
});
