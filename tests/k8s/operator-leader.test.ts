import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import type { Store } from '../../gateway/src/store/index.ts';
import { createTestStore, hasPostgres } from '../support/database.ts';
import { type FakeKube, startFakeKube } from '../support/fake-kube/index.ts';
import { testNamespace } from '../support/gateway.ts';
import { eventually } from '../support/wait.ts';

/**
 * Two operator processes (`node operator/src/main.ts`, as the chart runs it) against one fake API
 * server: one is elected through the Lease and reconciles; when it is killed (SIGKILL, no chance to
 * release the Lease) the other takes over within 20 s; a SIGTERM releases the Lease.
 */

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const NS = 'ops';

interface OperatorProcess {
  name: string;
  child: ChildProcess;
  logs: Array<Record<string, any>>;
  exited: Promise<number | null>;
}

let fake: FakeKube;
let store: Store;
let dispose: () => Promise<void>;
let dir: string;
const processes: OperatorProcess[] = [];

beforeAll(async () => {
  if (!hasPostgres()) return;
  fake = await startFakeKube({ namespace: NS });
  const test = await createTestStore();
  store = test.store;
  dispose = test.dispose;
  dir = await mkdtemp(path.join(os.tmpdir(), 'tollgate-operator-'));
  // client-node takes a plain http:// server only with TLS verification off.
  await writeFile(
    path.join(dir, 'kubeconfig'),
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      `  - name: fake\n    cluster:\n      server: ${fake.url}\n      insecure-skip-tls-verify: true`,
      'users:',
      `  - name: fake\n    user:\n      token: ${fake.token}`,
      'contexts:',
      `  - name: fake\n    context:\n      cluster: fake\n      user: fake\n      namespace: ${NS}`,
      'current-context: fake',
      '',
    ].join('\n'),
  );
  process.env.TOLLGATE_TEST_DATABASE_URL = test.url;
}, 60_000);

afterAll(async () => {
  for (const p of processes) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
  await Promise.all(processes.map((p) => p.exited));
  await fake?.close();
  await dispose?.();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function spawnOperator(name: string, namespace: string): OperatorProcess {
  const redisUrl = inject('redisUrl');
  const child = spawn(process.execPath, [path.join(root, 'operator/src/main.ts')], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '',
      KUBECONFIG: path.join(dir, 'kubeconfig'),
      DATABASE_URL: process.env.TOLLGATE_TEST_DATABASE_URL!,
      ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
      REDIS_NAMESPACE: namespace,
      SECRET_KEY: 'leader-test-secret-key-0123456789',
      WATCH_NAMESPACES: NS,
      POD_NAME: name,
      POD_NAMESPACE: NS,
      METRICS_PORT: '0',
      METRICS_HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: OperatorProcess['logs'] = [];
  let buffered = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) if (line.trim()) logs.push(JSON.parse(line));
  });
  child.stderr?.on('data', (chunk: Buffer) => logs.push({ msg: 'stderr', text: chunk.toString() }));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const started: OperatorProcess = { name, child, logs, exited };
  processes.push(started);
  return started;
}

const said = (p: OperatorProcess, msg: string) => p.logs.some((l) => l.msg === msg);
const lease = () => fake.get('leases', NS, 'tollgate-operator') as any;

async function healthOf(p: OperatorProcess): Promise<any> {
  const url = p.logs.find((l) => l.msg === 'Health and metrics server listening')?.url;
  return url ? (await fetch(`${url}/healthz`)).json() : {};
}

function channel(name: string) {
  fake.create('secrets', {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `${name}-key`, namespace: NS, labels: { 'tollgate.dev/watch': 'true' } },
    data: { apiKey: Buffer.from(`sk-${name}`).toString('base64') },
  });
  fake.create('channels', {
    apiVersion: 'tollgate.dev/v1alpha1',
    kind: 'Channel',
    metadata: { name, namespace: NS },
    spec: { type: 1, keySecretRef: { name: `${name}-key` }, models: ['gpt-4o'] },
  });
}

async function reconciled(name: string, withinMs: number) {
  const ready = await eventually(
    async () => (fake.get('channels', NS, name) as any)?.status?.conditions?.find((c: any) => c.type === 'Ready'),
    (c) => c?.status === 'True',
    withinMs,
  );
  expect(ready?.status).toBe('True');
  const row = await store.db.selectFrom('channels').select('id').where('managed_name', '=', name).executeTakeFirst();
  expect(row).toBeTruthy();
}

it.runIf(hasPostgres())(
  'elects one leader among two processes; the other takes over within 20 s of a SIGKILL; SIGTERM releases the Lease',
  async () => {
    const namespace = testNamespace();
    const a = spawnOperator('operator-a', namespace);
    const b = spawnOperator('operator-b', namespace);
    const first = await eventually(
      async () => [a, b].filter((p) => said(p, 'Became the leader')),
      (leaders) => leaders.length > 0,
      20_000,
    );
    expect(first).toHaveLength(1);
    const leader = first[0]!;
    const follower = leader === a ? b : a;
    expect(lease().spec.holderIdentity).toMatch(new RegExp(`^${leader.name}_`));
    await eventually(
      () => healthOf(follower),
      (h) => h.informers === 'synced',
      10_000,
    );
    expect(await healthOf(leader)).toMatchObject({ status: 'ok', leader: true });
    expect(await healthOf(follower)).toMatchObject({ status: 'ok', leader: false });

    channel('before-failover');
    await reconciled('before-failover', 10_000);

    const killedAt = Date.now();
    leader.child.kill('SIGKILL');
    await leader.exited;
    await eventually(async () => said(follower, 'Became the leader'), Boolean, 20_000);
    const takeover = Date.now() - killedAt;
    expect(takeover, `took over after ${takeover} ms`).toBeLessThan(20_000);
    expect(lease().spec.holderIdentity).toMatch(new RegExp(`^${follower.name}_`));
    expect(lease().spec.leaseTransitions).toBeGreaterThanOrEqual(1);
    channel('after-failover');
    await reconciled('after-failover', 10_000);

    // A graceful stop hands the Lease back at once.
    follower.child.kill('SIGTERM');
    expect(await follower.exited).toBe(0);
    expect(said(follower, 'Released the leader Lease')).toBe(true);
    expect(lease().spec.holderIdentity).toBe('');
  },
  60_000,
);
