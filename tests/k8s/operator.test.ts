import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { Keyring } from '../../gateway/src/domain/keyring.ts';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { loadConfig } from '../../operator/src/config.ts';
import { type Operator, startOperator } from '../../operator/src/operator.ts';
import { type DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase, hasPostgres } from '../support/database.ts';
import { type FakeKube, startFakeKube } from '../support/fake-kube/index.ts';
import { rbacFromManifests, serviceAccountUser } from '../support/fake-kube/rbac.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { renderChart } from '../support/helm.ts';
import { eventually } from '../support/wait.ts';

/**
 * The operator in this process against the fake API server, the test Postgres and Redis, next to a
 * gateway on the same database and bus: every kind created, changed and deleted, Secrets rotated,
 * watches dropped and compacted, drift repaired, bad specs reported, and the gateway's view of a
 * managed channel.
 */

const NS = 'ai';
const SECRET_KEY = 'operator-test-secret-key-0123456789';
/** The operator's service account as the chart names it for release `tg`. */
const OPERATOR_ACCOUNT = { namespace: NS, name: 'tg-tollgate-operator' };

let fake: FakeKube;
let gateway: Gateway;
let operator: Operator;
let root: DashboardClient;
let dropDatabase: () => Promise<void>;

const db = () => gateway.store.db;
const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

beforeAll(async () => {
  if (!hasPostgres()) return;
  // Every write, the operator's status patches included, is pruned and checked against the CRDs' schemas
  // and CEL rules, and the operator may do only what the chart's RBAC grants its service account when
  // the release lives in NS and watches it: a call the chart forgot is a 403 here, as in a cluster.
  const chart = renderChart(NS, [`operator.watchNamespaces={${NS}}`]);
  fake = await startFakeKube({ namespace: NS, rbac: rbacFromManifests(chart, OPERATOR_ACCOUNT) });
  const database = await createTestDatabase();
  dropDatabase = database.drop;
  const namespace = testNamespace();
  // The gateway creates the tables; the operator writes into them and announces on the same bus.
  gateway = await startTestGateway(gatewayEnv(database.options, namespace, { SECRET_KEY }));
  root = await setupRoot(gateway.url);
  const redisUrl = inject('redisUrl');
  const config = loadConfig({
    DATABASE_URL: database.url!,
    ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
    REDIS_NAMESPACE: namespace,
    SECRET_KEY,
    WATCH_NAMESPACES: NS,
    ACCESS_TOKEN_USERS: JSON.stringify({ [NS]: ['ci-bot'] }),
    // The Lease the chart's leader-election Role names.
    LEASE_NAME: operatorEnv(chart, 'LEASE_NAME'),
    POD_NAME: 'operator-in-process',
    POD_NAMESPACE: NS,
    GATEWAY_BASE_URL: 'http://tollgate.ai.svc:3000',
    RESYNC_SECONDS: '2',
    METRICS_PORT: '0',
    METRICS_HOST: '127.0.0.1',
  });
  operator = await startOperator(
    config,
    // OPERATOR_TEST_LOG=/tmp/operator.log keeps the operator's debug log (every informer event) for a failing run.
    process.env.OPERATOR_TEST_LOG
      ? pino({ level: 'debug' }, pino.destination(process.env.OPERATOR_TEST_LOG))
      : pino({ level: 'silent' }),
    {
      kubeConfig: fake.kubeConfig(),
      retryBaseMs: 100,
      defaultMetrics: false,
    },
  );
  await operator.synced;
  await eventually(async () => operator.isLeader, Boolean, 5_000);
}, 60_000);

afterAll(async () => {
  // Whatever the tests did, the operator never needed a right the chart does not grant.
  if (fake) {
    const refused = fake.requests.filter((r) => r.user === serviceAccountUser(OPERATOR_ACCOUNT) && r.status === 403);
    expect(refused.map((r) => `${r.method} ${r.path}`)).toEqual([]);
  }
  await operator?.stop();
  await gateway?.stop();
  await fake?.close();
  await dropDatabase?.();
});

// --- helpers ---

/** The value the chart gives a variable of the operator's container. */
function operatorEnv(chart: string, name: string): string {
  const deployment = parseAllDocuments(chart)
    .map((doc) => doc.toJS())
    .find((o) => o?.kind === 'Deployment' && o.metadata.labels?.['app.kubernetes.io/component'] === 'operator');
  const value = deployment?.spec.template.spec.containers[0].env.find((e: { name: string }) => e.name === name)?.value;
  if (typeof value !== 'string') throw new Error(`the chart gives the operator no ${name}`);
  return value;
}

function secret(name: string, data: Record<string, string>, labelled = true) {
  return fake.create('secrets', {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: NS, ...(labelled ? { labels: { 'tollgate.dev/watch': 'true' } } : {}) },
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
  });
}

function resource(kind: string, name: string, spec: Record<string, unknown>) {
  return fake.create(kind, { apiVersion: 'tollgate.dev/v1alpha1', kind, metadata: { name, namespace: NS }, spec });
}

function editSpec(kind: string, name: string, spec: Record<string, unknown>) {
  return fake.patch(kind, NS, name, { spec });
}

const get = (kind: string, name: string) => fake.get(kind, NS, name) as any;
const condition = (kind: string, name: string, type: string) =>
  get(kind, name)?.status?.conditions?.find((c: any) => c.type === type);

/** Waits until the resource's condition has the status (and reason), answering the resource. */
async function until(kind: string, name: string, type: string, status: string, reason?: string, withinMs = 10_000) {
  const found = await eventually(
    async () => condition(kind, name, type),
    (c) => c?.status === status && (reason === undefined || c?.reason === reason),
    withinMs,
  );
  expect(found, JSON.stringify(get(kind, name)?.status)).toMatchObject({ status, ...(reason ? { reason } : {}) });
  return get(kind, name);
}

/** The events.k8s.io Events the operator recorded about a resource, optionally of one reason. */
const eventsOf = (kind: string, name: string, reason?: string) =>
  fake
    .objects('events.events.k8s.io', NS)
    .map((e) => e as any)
    .filter((e) => e.regarding?.kind === kind && e.regarding?.name === name && (!reason || e.reason === reason));

async function eventOf(kind: string, name: string, reason: string, withinMs = 10_000) {
  const [found] = await eventually(
    async () => eventsOf(kind, name, reason),
    (list) => list.length > 0,
    withinMs,
  );
  expect(found, `${reason} Event about ${kind} ${name}`).toBeDefined();
  return found;
}

async function gone(kind: string, name: string, withinMs = 10_000) {
  const left = await eventually(
    async () => get(kind, name),
    (r) => r === undefined,
    withinMs,
  );
  expect(left).toBeUndefined();
}

const channelRow = (uid: string) =>
  db().selectFrom('channels').selectAll().where('managed_uid', '=', uid).executeTakeFirst();
const abilities = (id: number) =>
  db()
    .selectFrom('abilities')
    .select(['group', 'model', 'enabled'])
    .where('channel_id', '=', id)
    .orderBy('group')
    .orderBy('model')
    .execute();
const keyring = new Keyring(SECRET_KEY);
const keyOf = async (uid: string) => {
  const row = await channelRow(uid);
  return row && keyring.decrypt(row.key_encrypted);
};

describe.runIf(hasPostgres())('operator', () => {
  describe('Channel', () => {
    it('writes the channel from the resource and its Secret, with finalizer, conditions and runtime status', async () => {
      secret('openai-key', { apiKey: 'sk-first\nsk-second' });
      const created = resource('Channel', 'openai', {
        type: 1,
        baseURL: 'https://api.openai.example/',
        keySecretRef: { name: 'openai-key' },
        models: ['gpt-4o', 'gpt-4o-mini'],
        groups: ['default', 'vip'],
        modelMapping: { 'gpt-4o': 'gpt-4o-2024' },
        priority: 5,
        weight: 3,
        tag: 'openai',
        multiKeyMode: 'polling',
      });
      const ready = await until('Channel', 'openai', 'Ready', 'True', 'Reconciled');
      expect(ready.metadata.finalizers).toContain('tollgate.dev/finalizer-tollgate');
      const uid = created.metadata!.uid!;
      const row = await channelRow(uid);
      expect(row).toMatchObject({
        name: 'ai/openai',
        type: 1,
        base_url: 'https://api.openai.example',
        models: 'gpt-4o,gpt-4o-mini',
        group: 'default,vip',
        priority: 5,
        weight: 3,
        tag: 'openai',
        status: 1,
        model_mapping: '{"gpt-4o":"gpt-4o-2024"}',
        managed_by: 'tollgate-operator',
        managed_namespace: NS,
        managed_name: 'openai',
      });
      expect(JSON.parse(row!.channel_info)).toMatchObject({
        is_multi_key: true,
        multi_key_size: 2,
        multi_key_mode: 'polling',
      });
      expect(await keyOf(uid)).toBe('sk-first\nsk-second');
      expect(row!.key_encrypted).not.toContain('sk-first');
      expect(await abilities(row!.id)).toHaveLength(4);
      expect(ready.status).toMatchObject({
        channelId: row!.id,
        modelCount: 2,
        state: 'enabled',
        usedQuota: 0,
        observedGeneration: ready.metadata.generation,
      });
      for (const type of ['Ready', 'SecretResolved', 'Synced']) {
        expect(condition('Channel', 'openai', type)).toMatchObject({
          status: 'True',
          observedGeneration: ready.metadata.generation,
        });
      }
    });

    it('follows spec changes, a rotated key within seconds, and repairs drift in the database', async () => {
      const uid = get('Channel', 'openai').metadata.uid;
      editSpec('Channel', 'openai', { models: ['gpt-4o'], priority: 7, enabled: false });
      const row = await eventually(
        () => channelRow(uid),
        (r) => r?.priority === 7,
        10_000,
      );
      expect(row).toMatchObject({ models: 'gpt-4o', status: 2 });
      expect((await abilities(row!.id)).every((a) => !a.enabled)).toBe(true);
      const status = await eventually(
        async () => get('Channel', 'openai').status,
        (s) => s.state === 'disabled' && s.observedGeneration === get('Channel', 'openai').metadata.generation,
        10_000,
      );
      expect(status).toMatchObject({ state: 'disabled', modelCount: 1 });
      expect(condition('Channel', 'openai', 'Ready').status).toBe('True');

      const rotatedAt = Date.now();
      fake.patch('secrets', NS, 'openai-key', { data: { apiKey: b64('sk-rotated') } });
      expect(
        await eventually(
          () => keyOf(uid),
          (k) => k === 'sk-rotated',
          10_000,
        ),
      ).toBe('sk-rotated');
      expect(Date.now() - rotatedAt).toBeLessThan(5_000);
      expect(JSON.parse((await channelRow(uid))!.channel_info)).toMatchObject({
        is_multi_key: false,
        multi_key_size: 1,
      });

      // Someone edits the row behind the operator's back: the periodic pass puts it back.
      await db()
        .updateTable('channels')
        .set({ priority: 99, models: 'hacked' })
        .where('managed_uid', '=', uid)
        .execute();
      const repaired = await eventually(
        () => channelRow(uid),
        (r) => r?.priority === 7,
        10_000,
      );
      expect(repaired).toMatchObject({ priority: 7, models: 'gpt-4o' });
      expect((await abilities(repaired!.id)).map((a) => `${a.group}:${a.model}`)).toEqual([
        'default:gpt-4o',
        'vip:gpt-4o',
      ]);
    });

    it('shows the gateway runtime state in status and never overrides an auto-disable', async () => {
      const uid = get('Channel', 'openai').metadata.uid;
      editSpec('Channel', 'openai', { enabled: true });
      await eventually(
        () => channelRow(uid),
        (r) => r?.status === 1,
        10_000,
      );
      await db()
        .updateTable('channels')
        .set({
          status: 3,
          other_info: JSON.stringify({ status_reason: 'upstream answered 401', status_time: 1_700_000_000 }),
          test_time: 1_700_000_100,
          response_time: 321,
          used_quota: 4200,
          balance: 12.5,
          balance_updated_time: 1_700_000_200,
        })
        .where('managed_uid', '=', uid)
        .execute();
      const status = await eventually(
        async () => get('Channel', 'openai').status,
        (s) => s.state === 'autoDisabled' && s.usedQuota === 4200,
        10_000,
      );
      expect(status).toMatchObject({
        state: 'autoDisabled',
        stateReason: 'upstream answered 401',
        stateSince: '2023-11-14T22:13:20Z',
        lastTest: { time: '2023-11-14T22:15:00Z', latencyMs: 321 },
        usedQuota: 4200,
        balance: 12.5,
        balanceUpdated: '2023-11-14T22:16:40Z',
      });
      expect((await channelRow(uid))!.status).toBe(3);
      const event = await eventOf('Channel', 'openai', 'ChannelAutoDisabled');
      expect(event).toMatchObject({
        type: 'Warning',
        reportingController: 'tollgate.dev/operator',
        note: 'The gateway disabled the channel: upstream answered 401',
      });
    });

    it('reports a missing Secret, a missing key, an unlabelled Secret and an unknown type, then recovers', async () => {
      resource('Channel', 'broken', { type: 1, keySecretRef: { name: 'later-key' }, models: ['m1'] });
      const missing = await until('Channel', 'broken', 'SecretResolved', 'False', 'SecretNotFound');
      expect(condition('Channel', 'broken', 'Ready')).toMatchObject({ status: 'False', reason: 'SecretNotFound' });
      expect(missing.status.channelId).toBeUndefined();
      expect(await channelRow(missing.metadata.uid)).toBeUndefined();
      // An Event says so too: one, however often the retries meet the same problem.
      expect(await eventOf('Channel', 'broken', 'SecretNotFound')).toMatchObject({
        type: 'Warning',
        regarding: { apiVersion: 'tollgate.dev/v1alpha1', kind: 'Channel', namespace: NS, name: 'broken' },
      });
      const retries = () => metricValue('tollgate_operator_reconcile_total', { kind: 'Channel', result: 'requeue' });
      const before = await retries();
      await eventually(retries, (n) => n >= before + 2, 5_000);
      expect(eventsOf('Channel', 'broken', 'SecretNotFound')).toHaveLength(1);

      secret('later-key', { other: 'x' });
      await until('Channel', 'broken', 'SecretResolved', 'False', 'SecretKeyNotFound');
      fake.patch('secrets', NS, 'later-key', { data: { apiKey: b64('sk-later') } });
      await until('Channel', 'broken', 'Ready', 'True');

      secret('plain-key', { apiKey: 'sk-plain' }, false);
      editSpec('Channel', 'broken', { keySecretRef: { name: 'plain-key' } });
      await until('Channel', 'broken', 'SecretResolved', 'False', 'SecretNotWatched');
      editSpec('Channel', 'broken', { keySecretRef: { name: 'later-key' }, type: 999 });
      const invalid = await until('Channel', 'broken', 'Ready', 'False', 'InvalidSpec');
      expect(condition('Channel', 'broken', 'Ready').message).toContain('999');
      await eventOf('Channel', 'broken', 'InvalidSpec');
      expect(condition('Channel', 'broken', 'SecretResolved').status).toBe('True');
      expect((await channelRow(invalid.metadata.uid))!.type).toBe(1);
      expect(operator.isLeader).toBe(true);
      editSpec('Channel', 'broken', { type: 14 });
      await until('Channel', 'broken', 'Ready', 'True');
      expect((await channelRow(invalid.metadata.uid))!.type).toBe(14);
    });

    it('refuses a type Tollgate does not speak, naming it, and writes nothing until the type is one it does', async () => {
      secret('palm-key', { apiKey: 'sk-palm' });
      resource('Channel', 'palm', { type: 11, keySecretRef: { name: 'palm-key' }, models: ['m1'] });
      const refused = await until('Channel', 'palm', 'Ready', 'False', 'InvalidSpec');
      const message = condition('Channel', 'palm', 'Ready').message;
      expect(message).toContain('type 11 (PaLM) is not supported yet');
      expect(message).toContain('CHANNEL_TYPE_UNSUPPORTED');
      expect(condition('Channel', 'palm', 'Synced')).toMatchObject({ status: 'False', reason: 'InvalidSpec' });
      expect(await eventOf('Channel', 'palm', 'InvalidSpec')).toMatchObject({ type: 'Warning' });
      expect(await channelRow(refused.metadata.uid)).toBeUndefined();
      editSpec('Channel', 'palm', { type: 1 });
      await until('Channel', 'palm', 'Ready', 'True');
      expect((await channelRow(refused.metadata.uid))!.type).toBe(1);
      // Changing a written channel to such a type is refused the same way; the row keeps its type.
      editSpec('Channel', 'palm', { type: 21 });
      await until('Channel', 'palm', 'Ready', 'False', 'InvalidSpec');
      expect(condition('Channel', 'palm', 'Ready').message).toContain('type 21 (AIProxyLibrary)');
      expect((await channelRow(refused.metadata.uid))!.type).toBe(1);
    });

    it('deletes its row when the resource is deleted, then lets the resource go', async () => {
      const uid = get('Channel', 'broken').metadata.uid;
      const id = (await channelRow(uid))!.id;
      fake.delete('Channel', NS, 'broken');
      await gone('Channel', 'broken');
      expect(await channelRow(uid)).toBeUndefined();
      expect(await abilities(id)).toEqual([]);
      expect(await eventOf('Channel', 'broken', 'RecordsRemoved')).toMatchObject({
        type: 'Normal',
        action: 'Finalize',
      });
    });
  });

  describe('orphans', () => {
    it('removes records whose resource no longer exists, in the watched namespace only', async () => {
      const ghost = (namespace: string, uid: string) => ({
        type: 1,
        name: `${namespace}/ghost`,
        key_encrypted: keyring.encrypt('sk-ghost'),
        models: 'm',
        created_time: 1,
        managed_by: 'tollgate-operator',
        managed_namespace: namespace,
        managed_name: 'ghost',
        managed_uid: uid,
      });
      await db()
        .insertInto('channels')
        .values([ghost(NS, 'ghost-uid'), ghost('elsewhere', 'other-uid')])
        .execute();
      expect(
        await eventually(
          () => channelRow('ghost-uid'),
          (r) => r === undefined,
          15_000,
        ),
      ).toBeUndefined();
      expect(await channelRow('other-uid')).toBeTruthy();
      await db().deleteFrom('channels').where('managed_uid', '=', 'other-uid').execute();
    });
  });

  describe('watch robustness', () => {
    it('misses no change across a dropped watch', async () => {
      await fake.waitForWatches(6);
      const restarts = await metricValue('tollgate_operator_informer_restarts_total');
      expect(fake.dropWatches()).toBeGreaterThanOrEqual(6);
      secret('drop-key', { apiKey: 'sk-drop' });
      const created = resource('Channel', 'after-drop', { type: 1, keySecretRef: { name: 'drop-key' }, models: ['m'] });
      await until('Channel', 'after-drop', 'Ready', 'True', undefined, 15_000);
      expect(await channelRow(created.metadata!.uid!)).toBeTruthy();
      expect(await metricValue('tollgate_operator_informer_restarts_total')).toBeGreaterThan(restarts);
    });

    it('restarts informers whose watch and list fail with server errors', async () => {
      await fake.waitForWatches(6);
      const restarts = await metricValue('tollgate_operator_informer_restarts_total');
      fake.failNext(2, 503, { verb: 'watch', resource: 'modelprices' });
      fake.failNext(1, 500, { verb: 'list', resource: 'modelprices' });
      fake.compactHistory();
      fake.dropWatches({ graceful: true });
      resource('ModelPrice', 'after-errors', { model: 'errors-model', perCall: { price: 0.5 } });
      await until('ModelPrice', 'after-errors', 'Ready', 'True', undefined, 20_000);
      expect(await metricValue('tollgate_operator_informer_restarts_total')).toBeGreaterThan(restarts);
      expect(operator.isLeader).toBe(true);
    });

    it('relists after a 410 and misses no change, deletions included', async () => {
      await fake.waitForWatches(6);
      const uid = get('Channel', 'after-drop').metadata.uid;
      const lists = fake.requestCount({ verb: 'list', resource: 'channels' });
      // While the watches are down, the history is compacted and resources change.
      fake.compactHistory();
      fake.dropWatches();
      editSpec('Channel', 'after-drop', { priority: 42 });
      resource('ModelPrice', 'after-compaction', { model: 'compacted-model', perCall: { price: 0.25 } });
      fake.delete('secrets', NS, 'drop-key');
      fake.compactHistory();
      const row = await eventually(
        () => channelRow(uid),
        (r) => r?.priority === 42,
        15_000,
      );
      expect(row?.priority).toBe(42);
      const price = await eventually(
        () => db().selectFrom('model_prices').selectAll().where('model', '=', 'compacted-model').executeTakeFirst(),
        Boolean,
        10_000,
      );
      expect(price).toMatchObject({ quota_type: 1, model_price: 0.25 });
      // The Secret deleted while no watch ran reaches the channel as a delete from the relist.
      await until('Channel', 'after-drop', 'SecretResolved', 'False', 'SecretNotFound');
      expect((await channelRow(uid))?.priority).toBe(42);
      // Resuming from a compacted version got 410 Expired, and the informers listed again.
      expect(fake.requestCount({ verb: 'list', resource: 'channels' })).toBeGreaterThan(lists);
    });
  });

  describe('ModelPrice', () => {
    const price = (model: string) =>
      db().selectFrom('model_prices').selectAll().where('model', '=', model).executeTakeFirst();

    it('stores per-token prices as ratios, follows changes, refuses a second owner, and deletes', async () => {
      resource('ModelPrice', 'gpt-4o', { model: 'gpt-4o', perToken: { input: 2.5, output: 10, cacheRead: 1.25 } });
      await until('ModelPrice', 'gpt-4o', 'Ready', 'True');
      expect(get('ModelPrice', 'gpt-4o').status.mode).toBe('perToken');
      expect(await price('gpt-4o')).toMatchObject({
        quota_type: 0,
        model_ratio: 1.25,
        completion_ratio: 4,
        cache_ratio: 0.5,
        cache_creation_ratio: null,
        model_price: null,
        managed_by: 'tollgate-operator',
        managed_name: 'gpt-4o',
      });
      editSpec('ModelPrice', 'gpt-4o', { perToken: { input: 5, output: 15, cacheRead: null } });
      await eventually(
        () => price('gpt-4o'),
        (p) => p?.model_ratio === 2.5,
        10_000,
      );
      expect(await price('gpt-4o')).toMatchObject({ completion_ratio: 3, cache_ratio: null });

      resource('ModelPrice', 'gpt-4o-again', { model: 'gpt-4o', perCall: { price: 1 } });
      const conflict = await until('ModelPrice', 'gpt-4o-again', 'Ready', 'False', 'Conflict');
      expect(conflict.status.conditions[0].message).toContain('ai/gpt-4o');
      expect((await eventOf('ModelPrice', 'gpt-4o-again', 'Conflict')).note).toContain('ai/gpt-4o');
      fake.delete('ModelPrice', NS, 'gpt-4o-again');
      await gone('ModelPrice', 'gpt-4o-again');
      expect((await price('gpt-4o'))?.managed_name).toBe('gpt-4o');

      fake.delete('ModelPrice', NS, 'gpt-4o');
      await gone('ModelPrice', 'gpt-4o');
      expect(await price('gpt-4o')).toBeUndefined();
    });

    it('sets a tiered expression for its model in billing_setting, owns it there, and refuses one that does not compile', async () => {
      const expression = 'len <= 200000 ? tier("standard", p * 3 + c * 15) : tier("long", p * 6 + c * 22.5)';
      const effective = async (key: string) => {
        const listed = (await root.get('/api/option/')).body.data as Array<{ key: string; value: string }>;
        return JSON.parse(listed.find((option) => option.key === key)?.value ?? '{}') as Record<string, string>;
      };
      resource('ModelPrice', 'claude-long', { model: 'claude-long', tiered: { expression } });
      await until('ModelPrice', 'claude-long', 'Ready', 'True');
      expect(get('ModelPrice', 'claude-long').status.mode).toBe('tiered');
      expect(await price('claude-long')).toMatchObject({
        billing_expr: expression,
        model_ratio: null,
        model_price: null,
        managed_name: 'claude-long',
      });
      // Every pod lays it over the two options; administrators cannot change it there.
      expect(
        await eventually(
          () => effective('billing_setting.billing_expr'),
          (map) => map['claude-long'] === expression,
          10_000,
        ),
      ).toMatchObject({ 'claude-long': expression });
      expect(await effective('billing_setting.billing_mode')).toMatchObject({ 'claude-long': 'tiered_expr' });
      const edit = await root.put('/api/option/', {
        key: 'billing_setting.billing_expr',
        value: JSON.stringify({ 'claude-long': 'p * 1' }),
      });
      expect(edit.body).toMatchObject({ success: false, code: 'MANAGED_BY_RESOURCE' });

      editSpec('ModelPrice', 'claude-long', { tiered: { expression: 'p * 3 + q' } });
      const refused = await until('ModelPrice', 'claude-long', 'Ready', 'False', 'InvalidSpec');
      expect(refused.status.conditions[0].message).toContain('position 9');
      expect((await price('claude-long'))?.billing_expr).toBe(expression);

      fake.delete('ModelPrice', NS, 'claude-long');
      await gone('ModelPrice', 'claude-long');
      expect(await price('claude-long')).toBeUndefined();
      await eventually(
        () => effective('billing_setting.billing_expr'),
        (map) => !('claude-long' in map),
        10_000,
      );
    });
  });

  describe('Group', () => {
    const group = (name: string) => db().selectFrom('groups').selectAll().where('name', '=', name).executeTakeFirst();

    it('writes, renames and deletes the groups row', async () => {
      resource('Group', 'vip', {
        ratio: 0.8,
        description: 'VIP',
        selectable: true,
        userGroupRatios: { svip: 0.5 },
        rateLimits: { '*': { rpm: 600 }, 'gpt-4o': { tpm: 50000 } },
      });
      await until('Group', 'vip', 'Ready', 'True');
      expect(await group('vip')).toMatchObject({
        ratio: 0.8,
        description: 'VIP',
        selectable: true,
        user_group_ratios: '{"svip":0.5}',
        rate_limits: '{"*":{"rpm":600},"gpt-4o":{"tpm":50000}}',
        managed_by: 'tollgate-operator',
      });
      // The gateway hears of it on the bus: the group's limits apply as if set in rate_limit_setting.groups.
      expect(
        await eventually(
          async () => gateway.options.getJson<Record<string, unknown>>('rate_limit_setting.groups').vip,
          Boolean,
          5_000,
        ),
      ).toEqual({ '*': { rpm: 600 }, 'gpt-4o': { tpm: 50000 } });
      editSpec('Group', 'vip', { name: 'premium' });
      await eventually(() => group('premium'), Boolean, 10_000);
      expect(await group('vip')).toBeUndefined();
      fake.delete('Group', NS, 'vip');
      await gone('Group', 'vip');
      expect(await group('premium')).toBeUndefined();
    });
  });

  describe('GatewaySettings', () => {
    const option = (key: string) => db().selectFrom('options').selectAll().where('key', '=', key).executeTakeFirst();

    it('applies valid settings as managed options, lists rejected ones, and removes them on delete', async () => {
      resource('GatewaySettings', 'site', {
        settings: { SystemName: 'Tollgate AI', QuotaPerUnit: 'lots', NoSuchOption: '1', RetryTimes: '3' },
      });
      const settings = await until('GatewaySettings', 'site', 'Ready', 'False', 'InvalidSettings');
      expect(settings.status.applied).toEqual(['SystemName', 'RetryTimes']);
      expect(settings.status.rejected.map((r: any) => r.key)).toEqual(['QuotaPerUnit', 'NoSuchOption']);
      expect(condition('GatewaySettings', 'site', 'Ready').message).toContain('QuotaPerUnit');
      expect(await option('SystemName')).toMatchObject({ value: 'Tollgate AI', managed_by: 'tollgate-operator' });
      expect(await option('QuotaPerUnit')).toBeUndefined();

      // The gateway hears of it on the bus, and refuses API edits of the managed key.
      expect(
        await eventually(
          async () => gateway.options.get('SystemName'),
          (v) => v === 'Tollgate AI',
          5_000,
        ),
      ).toBe('Tollgate AI');
      const edit = await root.put('/api/option/', { key: 'SystemName', value: 'hijacked' });
      expect(edit.body.success).toBe(false);
      expect(JSON.stringify(edit.body)).toContain('ai/site');

      editSpec('GatewaySettings', 'site', { settings: { QuotaPerUnit: null, NoSuchOption: null, RetryTimes: null } });
      await until('GatewaySettings', 'site', 'Ready', 'True');
      expect(await option('RetryTimes')).toBeUndefined();
      fake.delete('GatewaySettings', NS, 'site');
      await gone('GatewaySettings', 'site');
      expect(await option('SystemName')).toBeUndefined();
      expect(
        await eventually(
          async () => gateway.options.get('SystemName'),
          (v) => v !== 'Tollgate AI',
          5_000,
        ),
      ).not.toBe('Tollgate AI');
    });
  });

  describe('AccessToken', () => {
    const token = (uid: string) =>
      db().selectFrom('tokens').selectAll().where('managed_uid', '=', uid).orderBy('id').executeTakeFirst();
    const decode = (text: string) => Buffer.from(text, 'base64').toString('utf8');

    it('waits for its user, then writes a token and an owned Secret; keeps the key; cleans up on delete', async () => {
      const created = resource('AccessToken', 'batch-job', {
        user: 'ci-bot',
        models: ['gpt-4o'],
        unlimitedQuota: false,
        quota: 1000,
        allowIPs: ['10.0.0.0/8'],
      });
      const uid = created.metadata!.uid!;
      await until('AccessToken', 'batch-job', 'Ready', 'False', 'UserNotFound');
      await db()
        .insertInto('users')
        .values({ username: 'ci-bot', password: 'x', created_at: Math.floor(Date.now() / 1000) })
        .execute();
      const ready = await until('AccessToken', 'batch-job', 'Ready', 'True', undefined, 15_000);
      const row = await token(uid);
      expect(row).toMatchObject({
        name: 'batch-job',
        remain_quota: 1000,
        unlimited_quota: false,
        model_limits_enabled: true,
        model_limits: 'gpt-4o',
        allow_ips: '10.0.0.0/8',
        managed_by: 'tollgate-operator',
      });
      expect(ready.status).toMatchObject({ tokenId: row!.id, secretName: 'batch-job-token' });
      const written = fake.get('secrets', NS, 'batch-job-token') as any;
      expect(written.metadata.ownerReferences).toEqual([
        expect.objectContaining({ kind: 'AccessToken', name: 'batch-job', uid, controller: true }),
      ]);
      const apiKey = decode(written.data.apiKey);
      expect(decode(written.data.baseURL)).toBe('http://tollgate.ai.svc:3000');
      expect(apiKey).toMatch(/^sk-[0-9A-Za-z]{48}$/);
      expect(keyring.hmac(apiKey.slice(3))).toBe(row!.key_hmac);
      expect(JSON.stringify(ready.status)).not.toContain(apiKey.slice(3));

      // Spent quota is not refilled by later passes; a new spec.quota is written once.
      await db().updateTable('tokens').set({ remain_quota: 400 }).where('id', '=', row!.id).execute();
      editSpec('AccessToken', 'batch-job', { allowIPs: ['10.0.0.0/8', '192.168.1.1'] });
      await eventually(
        () => token(uid),
        (t) => t?.allow_ips.includes('192.168.1.1') ?? false,
        10_000,
      );
      expect((await token(uid))!.remain_quota).toBe(400);
      editSpec('AccessToken', 'batch-job', { quota: 5000 });
      expect(
        (await eventually(
          () => token(uid),
          (t) => t?.remain_quota === 5000,
          10_000,
        ))!.remain_quota,
      ).toBe(5000);

      // A deleted Secret comes back, with the same key.
      fake.delete('secrets', NS, 'batch-job-token');
      const back: any = await eventually(async () => fake.get('secrets', NS, 'batch-job-token'), Boolean, 10_000);
      expect(decode(back.data.apiKey)).toBe(apiKey);
      expect((await token(uid))!.id).toBe(row!.id);

      fake.delete('AccessToken', NS, 'batch-job');
      await gone('AccessToken', 'batch-job');
      expect((await token(uid))!.deleted_at).not.toBeNull();
      expect(fake.get('secrets', NS, 'batch-job-token')).toBeUndefined();
    });
  });

  describe('AccessToken users', () => {
    it('refuses a user the namespace is not allowed (root above all): UserNotAllowed, an Event, no token', async () => {
      const created = resource('AccessToken', 'as-root', { user: 'root' });
      const refused = await until('AccessToken', 'as-root', 'Ready', 'False', 'UserNotAllowed');
      expect(condition('AccessToken', 'as-root', 'Ready').message).toContain('ACCESS_TOKEN_USERS');
      expect(refused.status.tokenId).toBeUndefined();
      const event = await eventOf('AccessToken', 'as-root', 'UserNotAllowed');
      expect(event.type).toBe('Warning');
      const tokens = await db()
        .selectFrom('tokens')
        .select('id')
        .where('managed_uid', '=', created.metadata!.uid!)
        .execute();
      expect(tokens).toEqual([]);
      expect(fake.get('secrets', NS, 'as-root-token')).toBeUndefined();
      fake.delete('AccessToken', NS, 'as-root');
      await gone('AccessToken', 'as-root');
    });
  });

  describe('instances', () => {
    const labelled = (name: string, instance: string, spec: Record<string, unknown>) =>
      fake.create('ModelPrice', {
        apiVersion: 'tollgate.dev/v1alpha1',
        kind: 'ModelPrice',
        metadata: { name, namespace: NS, labels: { 'tollgate.dev/instance': instance } },
        spec,
      });
    const priceRow = (uid: string) =>
      db().selectFrom('model_prices').selectAll().where('managed_uid', '=', uid).executeTakeFirst();

    it("leaves another instance's resources alone: no finalizer, no status, no Event, no record", async () => {
      const other = labelled('other-instance', 'green', { model: 'green-model', perCall: { price: 1 } });
      // A resource of ours created after it is reconciled: the operator has seen both by then.
      labelled('this-instance', 'tollgate', { model: 'blue-model', perCall: { price: 1 } });
      await until('ModelPrice', 'this-instance', 'Ready', 'True');
      const untouched = get('ModelPrice', 'other-instance');
      expect(untouched.metadata.finalizers).toBeUndefined();
      expect(untouched.status).toBeUndefined();
      expect(eventsOf('ModelPrice', 'other-instance')).toEqual([]);
      expect(await priceRow(other.metadata!.uid!)).toBeUndefined();
      expect(fake.requestCount({ resource: 'modelprices', name: 'other-instance' })).toBe(0);
    });

    it('releases a resource relabelled away (finalizer removed, record kept) and takes it back', async () => {
      const uid = get('ModelPrice', 'this-instance').metadata.uid;
      expect(get('ModelPrice', 'this-instance').metadata.finalizers).toEqual(['tollgate.dev/finalizer-tollgate']);
      fake.patch('ModelPrice', NS, 'this-instance', { metadata: { labels: { 'tollgate.dev/instance': 'green' } } });
      await eventually(
        async () => get('ModelPrice', 'this-instance').metadata.finalizers,
        (f) => f === undefined || f.length === 0,
        10_000,
      );
      expect((await priceRow(uid))?.managed_name).toBe('this-instance');
      // Not updated while it is another instance's.
      editSpec('ModelPrice', 'this-instance', { perCall: { price: 2 } });
      fake.patch('ModelPrice', NS, 'this-instance', { metadata: { labels: { 'tollgate.dev/instance': 'tollgate' } } });
      await eventually(
        () => priceRow(uid),
        (row) => row?.model_price === 2,
        10_000,
      );
      expect(get('ModelPrice', 'this-instance').metadata.finalizers).toEqual(['tollgate.dev/finalizer-tollgate']);
      fake.delete('ModelPrice', NS, 'this-instance');
      fake.delete('ModelPrice', NS, 'other-instance');
      await gone('ModelPrice', 'this-instance');
    });
  });

  describe('steady state', () => {
    it('writes status only when it changes: none over several resyncs of an unchanged resource', async () => {
      resource('Group', 'steady', { ratio: 1.5 });
      await until('Group', 'steady', 'Ready', 'True');
      const writes = () => fake.requestCount({ resource: 'groups', name: 'steady', subresource: 'status' });
      const first = writes();
      expect(first).toBeGreaterThanOrEqual(1);
      // Several resyncs (RESYNC_SECONDS=2) reconcile it again (the only Group now) and find nothing to write.
      const groupReconciles = () => metricValue('tollgate_operator_reconcile_total', { kind: 'Group', result: 'ok' });
      const reconciles = await groupReconciles();
      await eventually(groupReconciles, (n) => n >= reconciles + 3, 15_000);
      expect(writes()).toBe(first);
      expect(fake.requestCount({ resource: 'groups', name: 'steady', verb: 'patch' })).toBe(first + 1); // + finalizer
      fake.delete('Group', NS, 'steady');
      await gone('Group', 'steady');
    });
  });

  describe('with the gateway', () => {
    it('shows an operator channel as managed, and refuses edits through the API naming the resource', async () => {
      secret('claude-key', { apiKey: 'sk-ant-1' });
      const created = resource('Channel', 'claude', {
        type: 14,
        keySecretRef: { name: 'claude-key' },
        models: ['claude-sonnet-4'],
      });
      await until('Channel', 'claude', 'Ready', 'True');
      const id = get('Channel', 'claude').status.channelId;
      const listed = await eventually(
        () => root.get('/api/channel/?p=1&page_size=100'),
        (answer) => answer.body?.data?.items?.some((c: any) => c.id === id),
        5_000,
      );
      const shown = listed.body.data.items.find((c: any) => c.id === id);
      expect(shown).toMatchObject({
        managed_by: 'tollgate-operator',
        managed_namespace: NS,
        managed_name: 'claude',
        key: '',
      });

      const before = await channelRow(created.metadata!.uid!);
      const edit = await root.put('/api/channel/', { id, name: 'renamed', priority: 9 });
      // A refusal in new-api's envelope: HTTP 200, success false, naming the resource that owns it.
      expect({ status: edit.status, success: edit.body.success, code: edit.body.code }).toEqual({
        status: 200,
        success: false,
        code: 'MANAGED_BY_RESOURCE',
      });
      expect(edit.body.message).toContain(`Channel ${NS}/claude`);
      expect(await channelRow(created.metadata!.uid!)).toEqual(before);
    });
  });

  describe('metrics and probes', () => {
    it('serves /healthz and the agreed metrics on /metrics', async () => {
      const health = await fetch(`${operator.healthUrl}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ status: 'ok', leader: true });
      const text = await (await fetch(`${operator.healthUrl}/metrics`)).text();
      for (const name of [
        'tollgate_operator_reconcile_total{kind="Channel",result="ok"}',
        'tollgate_operator_reconcile_total{kind="Channel",result="requeue"}',
        'tollgate_operator_reconcile_errors_total',
        'tollgate_operator_reconcile_duration_seconds_bucket{le="0.005",kind="Channel"}',
        'tollgate_operator_queue_depth',
        'tollgate_operator_informer_restarts_total{kind="Channel"}',
        'tollgate_operator_last_event_age_seconds{kind="Secret"}',
        'tollgate_operator_is_leader 1',
        'tollgate_operator_informer_synced{kind="Channel"} 1',
        'tollgate_operator_informer_synced{kind="Secret"} 1',
      ]) {
        expect(text).toContain(name);
      }
    });
  });
});

/** The sum of a metric's series, or of those whose labels include `labels`. */
async function metricValue(name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = await operator.metrics.registry.getSingleMetric(name)?.get();
  return (metric?.values ?? [])
    .filter((v) => Object.entries(labels).every(([key, value]) => v.labels[key] === value))
    .reduce((sum, v) => sum + v.value, 0);
}
