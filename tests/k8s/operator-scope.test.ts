import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, loadScope } from '../../operator/src/config.ts';
import { KubeClient } from '../../operator/src/kube/client.ts';
import { type Operator, startOperator } from '../../operator/src/operator.ts';
import { removeFinalizers } from '../../operator/src/remove-finalizers.ts';
import { createTestStore, hasPostgres } from '../support/database.ts';
import { type FakeKube, startFakeKube } from '../support/fake-kube/index.ts';
import { eventually } from '../support/wait.ts';

/**
 * The operator's scope against the fake API server: it watches only the listed namespaces (namespaced
 * lists and watches, as a Role per namespace allows), reconciles nothing before every cache synced,
 * reports a forbidden or missing list in its metrics, and `remove-finalizers` stops it and lets every
 * resource go.
 */

const root = path.resolve(import.meta.dirname, '../..');
const WATCHED = ['team-a', 'team-b'];
const FINALIZER = 'tollgate.dev/finalizer-tollgate';

let fake: FakeKube;
let operator: Operator;
let dispose: () => Promise<void>;
let databaseUrl: string;
let dir: string;

const price = (namespace: string, name: string, extra: Record<string, unknown> = {}) =>
  fake.create('ModelPrice', {
    apiVersion: 'tollgate.dev/v1alpha1',
    kind: 'ModelPrice',
    metadata: { name, namespace, ...extra },
    spec: { model: `${namespace}-${name}`, perCall: { price: 1 } },
  });
const get = (namespace: string, name: string) => fake.get('ModelPrice', namespace, name) as any;
const ready = (namespace: string, name: string) =>
  get(namespace, name)?.status?.conditions?.find((c: any) => c.type === 'Ready')?.status === 'True';

async function metric(name: string, labels: Record<string, string>): Promise<number | undefined> {
  const values = (await operator.metrics.registry.getSingleMetric(name)?.get())?.values ?? [];
  return values.find((v) => Object.entries(labels).every(([k, value]) => v.labels[k] === value))?.value;
}

beforeAll(async () => {
  if (!hasPostgres()) return;
  fake = await startFakeKube({ namespace: 'team-a' });
  const test = await createTestStore();
  dispose = test.dispose;
  databaseUrl = test.url!;
  dir = await mkdtemp(path.join(os.tmpdir(), 'tollgate-operator-scope-'));
}, 60_000);

afterAll(async () => {
  await operator?.stop();
  await fake?.close();
  await dispose?.();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe.runIf(hasPostgres())('operator scope', () => {
  it('reconciles nothing before every cache synced; a forbidden or missing list shows in its metrics', async () => {
    for (const namespace of [...WATCHED, 'team-c']) price(namespace, 'p');
    // Channels cannot be listed (as without RBAC) until the failures are cleared; Groups once 404.
    fake.failNext(
      10_000,
      { code: 403, reason: 'Forbidden', message: 'channels is forbidden' },
      {
        verb: 'list',
        resource: 'channels',
      },
    );
    fake.failNext(1, 404, { verb: 'list', resource: 'groups' });
    const config = loadConfig({
      DATABASE_URL: databaseUrl,
      SECRET_KEY: 'scope-test-secret-key-0123456789',
      WATCH_NAMESPACES: WATCHED.join(','),
      POD_NAME: 'scope-test',
      POD_NAMESPACE: 'team-a',
      RESYNC_SECONDS: '60',
      METRICS_PORT: '0',
      METRICS_HOST: '127.0.0.1',
    });
    operator = await startOperator(config, pino({ level: 'silent' }), {
      kubeConfig: fake.kubeConfig(),
      retryBaseMs: 100,
      defaultMetrics: false,
      lease: { durationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 100 },
    });
    await eventually(
      async () => (await metric('tollgate_operator_list_errors_total', { kind: 'Channel', reason: 'forbidden' })) ?? 0,
      (n) => n >= 2,
      10_000,
    );
    expect(
      await eventually(
        () => metric('tollgate_operator_list_errors_total', { kind: 'Group', reason: 'not_found' }),
        (n) => n === 1,
        10_000,
      ),
    ).toBe(1);
    await eventually(async () => operator.isLeader, Boolean, 5_000);
    await eventually(
      async () => metric('tollgate_operator_informer_synced', { kind: 'ModelPrice' }),
      (v) => v === 1,
      5_000,
    );
    expect(await metric('tollgate_operator_informer_synced', { kind: 'Channel' })).toBe(0);
    // Leading, with the ModelPrice cache complete: still no reconcile while the Channel cache is not.
    expect(fake.requestCount({ verb: ['patch', 'update', 'create'], resource: 'modelprices' })).toBe(0);
    expect(get('team-a', 'p').metadata.finalizers).toBeUndefined();

    fake.clearFailures();
    await operator.synced;
    for (const namespace of WATCHED) {
      await eventually(async () => ready(namespace, 'p'), Boolean, 10_000);
      expect(get(namespace, 'p').metadata.finalizers).toEqual([FINALIZER]);
    }
    expect(await metric('tollgate_operator_informer_synced', { kind: 'Channel' })).toBe(1);
    // Only the listed namespaces, each on its own (no cluster-wide list or watch).
    expect(get('team-c', 'p').metadata.finalizers).toBeUndefined();
    expect(get('team-c', 'p').status).toBeUndefined();
    expect(fake.requestCount({ namespace: 'team-c' })).toBe(0);
    const collections = fake.requests.filter((r) => r.verb === 'list' || r.verb === 'watch');
    expect(collections.length).toBeGreaterThan(0);
    for (const request of collections) expect(WATCHED, request.path).toContain(request.namespace);
  });

  it('remove-finalizers takes the Lease (the leader stops), then removes its finalizers', async () => {
    expect(operator.isLeader).toBe(true);
    const removed = await removeFinalizers({
      kube: new KubeClient(fake.kubeConfig()),
      scope: loadScope({ WATCH_NAMESPACES: WATCHED.join(',') }),
      lease: { namespace: 'team-a', name: 'tollgate-operator', identity: 'cleanup-job' },
      settle: () =>
        eventually(
          async () => operator.isLeader,
          (leading) => !leading,
          10_000,
        ).then(() => {}),
      logger: pino({ level: 'silent' }),
    });
    expect(removed).toBe(2);
    expect(operator.isLeader).toBe(false);
    expect((fake.get('leases', 'team-a', 'tollgate-operator') as any).spec.holderIdentity).toBe('cleanup-job');
    for (const namespace of WATCHED) expect(get(namespace, 'p').metadata.finalizers ?? []).toEqual([]);
    // With no finalizer left, deleting a resource is immediate.
    fake.delete('ModelPrice', 'team-a', 'p');
    expect(get('team-a', 'p')).toBeUndefined();
  });

  it('node operator/src/main.ts remove-finalizers: only its own instance, exit 0; --help exits 0', async () => {
    price('team-b', 'q', { finalizers: [FINALIZER] });
    price('team-b', 'green', {
      labels: { 'tollgate.dev/instance': 'green' },
      finalizers: ['tollgate.dev/finalizer-green'],
    });
    const kubeconfig = path.join(dir, 'kubeconfig');
    await writeFile(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        `clusters:\n  - name: fake\n    cluster:\n      server: ${fake.url}\n      insecure-skip-tls-verify: true`,
        `users:\n  - name: fake\n    user:\n      token: ${fake.token}`,
        'contexts:\n  - name: fake\n    context:\n      cluster: fake\n      user: fake',
        'current-context: fake',
        '',
      ].join('\n'),
    );
    // Asynchronously: the fake API server answers from this very process.
    const run = (...args: string[]) =>
      new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
        const options = {
          cwd: root,
          encoding: 'utf8' as const,
          timeout: 60_000,
          env: {
            PATH: process.env.PATH ?? '',
            KUBECONFIG: kubeconfig,
            WATCH_NAMESPACES: 'team-b',
            POD_NAMESPACE: 'team-b',
            LEASE_NAME: 'cli-lease',
          },
        };
        execFile(
          process.execPath,
          [path.join(root, 'operator/src/main.ts'), ...args],
          options,
          (error, stdout, stderr) =>
            resolve({ status: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr }),
        );
      });
    const result = await run('remove-finalizers');
    expect(result.status, result.stderr + result.stdout).toBe(0);
    expect(result.stdout).toContain('Finalizers removed');
    expect(get('team-b', 'q').metadata.finalizers ?? []).toEqual([]);
    expect(get('team-b', 'green').metadata.finalizers).toEqual(['tollgate.dev/finalizer-green']);
    const help = await run('--help');
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('remove-finalizers');
  }, 120_000);
});
