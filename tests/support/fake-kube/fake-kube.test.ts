import * as k8s from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sleep, waitFor } from '../wait.ts';
import { type FakeKube, type FakeKubeOptions, startFakeKube } from './index.ts';
import { rbacFromManifests } from './rbac.ts';

/**
 * The fake API server checked with the real @kubernetes/client-node: typed clients, KubernetesObjectApi (which
 * reads discovery), Watch and makeInformer.
 */

const GROUP = 'tollgate.dev';
const VERSION = 'v1alpha1';
const NS = 'default';
const channels = { group: GROUP, version: VERSION, namespace: NS, plural: 'channels' };
const mergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
const jsonPatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch);
const strategicPatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch);

function channel(name: string, spec: Record<string, unknown> = { type: 1, models: ['gpt-4o'] }, extra = {}) {
  return { apiVersion: `${GROUP}/${VERSION}`, kind: 'Channel', metadata: { name, ...extra }, spec };
}

/** The Status body of a failed client-node call. */
async function failure(call: Promise<unknown>): Promise<{ code: number; status: any }> {
  try {
    await call;
  } catch (error) {
    if (error instanceof k8s.ApiException) {
      const body = typeof error.body === 'string' ? JSON.parse(error.body) : error.body;
      return { code: error.code, status: body };
    }
    throw error;
  }
  throw new Error('expected the call to fail');
}

let fake: FakeKube;
let kc: k8s.KubeConfig;
let custom: k8s.CustomObjectsApi;
let core: k8s.CoreV1Api;

/** A server for the API mechanics: the CRD kinds without their schemas, so partial objects are accepted. */
async function start(options: FakeKubeOptions = {}) {
  fake = await startFakeKube({ schemas: false, ...options });
  kc = fake.kubeConfig();
  custom = kc.makeApiClient(k8s.CustomObjectsApi);
  core = kc.makeApiClient(k8s.CoreV1Api);
}

afterEach(async () => {
  await fake?.close();
});

describe('custom resources', () => {
  beforeEach(() => start());

  it('creates, reads, lists, replaces and deletes with Kubernetes metadata', async () => {
    const created = await custom.createNamespacedCustomObject({ ...channels, body: channel('openai') });
    expect(created.apiVersion).toBe('tollgate.dev/v1alpha1');
    expect(created.kind).toBe('Channel');
    expect(created.metadata).toMatchObject({ name: 'openai', namespace: NS, generation: 1, resourceVersion: '1' });
    expect(created.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

    const got = await custom.getNamespacedCustomObject({ ...channels, name: 'openai' });
    expect(got).toEqual(created);

    await custom.createNamespacedCustomObject({ ...channels, body: channel('claude') });
    const list = await custom.listNamespacedCustomObject(channels);
    expect(list.kind).toBe('ChannelList');
    expect(list.metadata.resourceVersion).toBe('2');
    expect(list.items.map((i: any) => i.metadata.name)).toEqual(['claude', 'openai']);

    const replaced = await custom.replaceNamespacedCustomObject({
      ...channels,
      name: 'openai',
      body: { ...got, spec: { type: 1, models: ['gpt-4o', 'gpt-5'] } },
    });
    expect(replaced.metadata.resourceVersion).toBe('3');
    expect(replaced.metadata.uid).toBe(created.metadata.uid);
    expect(replaced.metadata.creationTimestamp).toBe(created.metadata.creationTimestamp);

    const deleted = await custom.deleteNamespacedCustomObject({ ...channels, name: 'openai' });
    expect(deleted).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'openai', kind: 'channels' } });
    expect(fake.objects('channels').map((o) => o.metadata.name)).toEqual(['claude']);
  });

  it('answers errors as Status objects: NotFound, AlreadyExists, BadRequest', async () => {
    const missing = await failure(custom.getNamespacedCustomObject({ ...channels, name: 'nope' }));
    expect(missing.code).toBe(404);
    expect(missing.status).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'channels.tollgate.dev "nope" not found',
      reason: 'NotFound',
      details: { name: 'nope', group: 'tollgate.dev', kind: 'channels' },
      code: 404,
    });

    await custom.createNamespacedCustomObject({ ...channels, body: channel('dup') });
    const dup = await failure(custom.createNamespacedCustomObject({ ...channels, body: channel('dup') }));
    expect(dup.code).toBe(409);
    expect(dup.status).toMatchObject({
      reason: 'AlreadyExists',
      message: 'channels.tollgate.dev "dup" already exists',
    });

    const wrongNs = await failure(
      custom.createNamespacedCustomObject({ ...channels, body: channel('x', undefined, { namespace: 'other' }) }),
    );
    expect(wrongNs.status).toMatchObject({ code: 400, reason: 'BadRequest' });

    const badName = await failure(custom.createNamespacedCustomObject({ ...channels, body: channel('Not_A_Name') }));
    expect(badName.status).toMatchObject({ code: 422, reason: 'Invalid' });
  });

  it('generates names from generateName', async () => {
    const created = await custom.createNamespacedCustomObject({
      ...channels,
      body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'Channel', metadata: { generateName: 'ch-' }, spec: {} },
    });
    expect(created.metadata.name).toMatch(/^ch-[a-z0-9]{5}$/);
  });

  it('bumps generation only when spec changes', async () => {
    let obj = await custom.createNamespacedCustomObject({ ...channels, body: channel('gen') });
    expect(obj.metadata.generation).toBe(1);

    // Metadata only: resourceVersion moves, generation does not.
    obj = await custom.patchNamespacedCustomObject(
      { ...channels, name: 'gen', body: { metadata: { labels: { team: 'a' }, annotations: { note: 'x' } } } },
      mergePatch,
    );
    expect(obj.metadata).toMatchObject({ generation: 1, resourceVersion: '2', labels: { team: 'a' } });

    // Status through the subresource: no bump.
    obj = await custom.patchNamespacedCustomObjectStatus(
      { ...channels, name: 'gen', body: { status: { channelId: 7 } } },
      mergePatch,
    );
    expect(obj.metadata.generation).toBe(1);
    expect(obj.status).toEqual({ channelId: 7 });

    // Spec: bump.
    obj = await custom.patchNamespacedCustomObject(
      { ...channels, name: 'gen', body: { spec: { priority: 5 } } },
      mergePatch,
    );
    expect(obj.metadata.generation).toBe(2);

    // A write that changes nothing keeps resourceVersion and generation (and emits no event).
    const rv = obj.metadata.resourceVersion;
    const same = await custom.replaceNamespacedCustomObject({ ...channels, name: 'gen', body: obj });
    expect(same.metadata).toMatchObject({ resourceVersion: rv, generation: 2 });
    expect(fake.resourceVersion()).toBe(rv);
  });

  it('keeps status to the status subresource', async () => {
    // Create drops status.
    let obj = await custom.createNamespacedCustomObject({
      ...channels,
      body: { ...channel('st'), status: { state: 'enabled' } },
    });
    expect(obj.status).toBeUndefined();

    // A main-resource write ignores status.
    obj = await custom.replaceNamespacedCustomObject({
      ...channels,
      name: 'st',
      body: { ...obj, spec: { type: 2 }, status: { state: 'ignored' } },
    });
    expect(obj.spec).toEqual({ type: 2 });
    expect(obj.status).toBeUndefined();

    // A status write ignores spec and metadata.
    obj = await custom.replaceNamespacedCustomObjectStatus({
      ...channels,
      name: 'st',
      body: {
        ...obj,
        metadata: { ...obj.metadata, labels: { no: 'pe' } },
        spec: { type: 99 },
        status: { state: 'ok' },
      },
    });
    expect(obj.spec).toEqual({ type: 2 });
    expect(obj.metadata.labels).toBeUndefined();
    expect(obj.status).toEqual({ state: 'ok' });
    expect(obj.metadata.generation).toBe(2);

    const viaStatus = await custom.getNamespacedCustomObjectStatus({ ...channels, name: 'st' });
    expect(viaStatus.status).toEqual({ state: 'ok' });

    // Secrets have no status subresource.
    const noStatus = await fetch(`${fake.url}/api/v1/namespaces/default/secrets/x/status`, {
      headers: { authorization: `Bearer ${fake.token}` },
    });
    expect(noStatus.status).toBe(404);
  });

  it('refuses a stale update with 409 Conflict and an unconditional PUT with 422', async () => {
    const v1 = await custom.createNamespacedCustomObject({ ...channels, body: channel('cas') });
    await custom.replaceNamespacedCustomObject({ ...channels, name: 'cas', body: { ...v1, spec: { type: 2 } } });
    const stale = await failure(
      custom.replaceNamespacedCustomObject({ ...channels, name: 'cas', body: { ...v1, spec: { type: 3 } } }),
    );
    expect(stale.code).toBe(409);
    expect(stale.status).toMatchObject({
      reason: 'Conflict',
      message:
        'Operation cannot be fulfilled on channels.tollgate.dev "cas": the object has been modified; please apply your changes to the latest version and try again',
    });

    const { resourceVersion: _rv, ...metaWithoutRv } = v1.metadata;
    const unconditional = await failure(
      custom.replaceNamespacedCustomObject({ ...channels, name: 'cas', body: { ...v1, metadata: metaWithoutRv } }),
    );
    expect(unconditional.status).toMatchObject({
      code: 422,
      reason: 'Invalid',
      message:
        'channels.tollgate.dev "cas" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update',
      details: {
        name: 'cas',
        group: 'tollgate.dev',
        kind: 'channels',
        causes: [
          {
            reason: 'FieldValueInvalid',
            message: 'Invalid value: 0x0: must be specified for an update',
            field: 'metadata.resourceVersion',
          },
        ],
      },
    });

    // A merge patch carrying a stale resourceVersion is a precondition too.
    const stalePatch = await failure(
      custom.patchNamespacedCustomObject(
        {
          ...channels,
          name: 'cas',
          body: { metadata: { resourceVersion: v1.metadata.resourceVersion }, spec: { type: 4 } },
        },
        mergePatch,
      ),
    );
    expect(stalePatch.code).toBe(409);
    expect(fake.get('channels', NS, 'cas')?.spec).toEqual({ type: 2 });
  });

  it('keeps an object with finalizers until they are removed', async () => {
    await custom.createNamespacedCustomObject({
      ...channels,
      body: channel('fin', undefined, { finalizers: ['tollgate.dev/store-cleanup'] }),
    });
    const events: string[] = [];
    fake.onChange((e) => events.push(`${e.type} ${e.object.metadata.name}`));

    const pending = await custom.deleteNamespacedCustomObject({ ...channels, name: 'fin' });
    expect(pending.metadata.deletionTimestamp).toMatch(/Z$/);
    expect(pending.metadata.generation).toBe(2); // kube-apiserver bumps generation when it sets deletionTimestamp
    const still = await custom.getNamespacedCustomObject({ ...channels, name: 'fin' });
    expect(still.metadata.deletionTimestamp).toBe(pending.metadata.deletionTimestamp);

    // Deleting again changes nothing.
    await custom.deleteNamespacedCustomObject({ ...channels, name: 'fin' });
    expect(events).toEqual(['MODIFIED fin']);

    // No new finalizers on an object being deleted.
    const add = await failure(
      custom.patchNamespacedCustomObject(
        { ...channels, name: 'fin', body: { metadata: { finalizers: ['tollgate.dev/store-cleanup', 'other/x'] } } },
        mergePatch,
      ),
    );
    expect(add.status).toMatchObject({
      code: 422,
      reason: 'Invalid',
      message:
        'Channel.tollgate.dev "fin" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"other/x"}',
      details: { causes: [{ reason: 'FieldValueForbidden', field: 'metadata.finalizers' }] },
    });

    // Spec changes are still allowed while deleting; removing the last finalizer deletes the object.
    await custom.patchNamespacedCustomObject(
      { ...channels, name: 'fin', body: [{ op: 'remove', path: '/metadata/finalizers' }] },
      jsonPatch,
    );
    expect(events).toEqual(['MODIFIED fin', 'DELETED fin']);
    expect((await failure(custom.getNamespacedCustomObject({ ...channels, name: 'fin' }))).code).toBe(404);
  });

  it('checks delete preconditions', async () => {
    const obj = await custom.createNamespacedCustomObject({ ...channels, body: channel('pre') });
    const wrong = await failure(
      custom.deleteNamespacedCustomObject({ ...channels, name: 'pre', body: { preconditions: { uid: 'other' } } }),
    );
    expect(wrong.status).toMatchObject({
      code: 409,
      reason: 'Conflict',
      message: `Operation cannot be fulfilled on Channel.tollgate.dev "pre": the UID in the precondition (other) does not match the UID in record (${obj.metadata.uid}). The object might have been deleted and then recreated`,
    });
    const stale = await failure(
      custom.deleteNamespacedCustomObject({
        ...channels,
        name: 'pre',
        body: { preconditions: { resourceVersion: '0' } },
      }),
    );
    expect(stale.status.message).toContain('the ResourceVersion in the precondition (0) does not match');
    await custom.deleteNamespacedCustomObject({
      ...channels,
      name: 'pre',
      body: { preconditions: { uid: obj.metadata.uid, resourceVersion: obj.metadata.resourceVersion } },
    });
    expect(fake.get('channels', NS, 'pre')).toBeUndefined();
  });
});

describe('patch formats', () => {
  beforeEach(() => start());

  it('applies merge patch (null removes, arrays replace)', async () => {
    await custom.createNamespacedCustomObject({
      ...channels,
      body: channel('m', { type: 1, models: ['a', 'b'], tag: 'x', modelMapping: { a: 'b', c: 'd' } }),
    });
    const obj = await custom.patchNamespacedCustomObject(
      { ...channels, name: 'm', body: { spec: { models: ['c'], tag: null, modelMapping: { c: null, e: 'f' } } } },
      mergePatch,
    );
    expect(obj.spec).toEqual({ type: 1, models: ['c'], modelMapping: { a: 'b', e: 'f' } });
  });

  it('applies JSON patch (the client default), and a failed test op is 422', async () => {
    await custom.createNamespacedCustomObject({ ...channels, body: channel('j', { type: 1, models: ['a'] }) });
    const obj = await custom.patchNamespacedCustomObject({
      ...channels,
      name: 'j',
      body: [
        { op: 'test', path: '/spec/type', value: 1 },
        { op: 'add', path: '/spec/models/-', value: 'b' },
        { op: 'replace', path: '/spec/type', value: 14 },
        { op: 'add', path: '/metadata/labels', value: { 'app.kubernetes.io/name': 'x' } },
        { op: 'copy', from: '/spec/models/0', path: '/spec/testModel' },
        { op: 'move', from: '/spec/testModel', path: '/spec/tag' },
      ],
    });
    expect(obj.spec).toEqual({ type: 14, models: ['a', 'b'], tag: 'a' });
    expect(obj.metadata.labels).toEqual({ 'app.kubernetes.io/name': 'x' });

    const failed = await failure(
      custom.patchNamespacedCustomObject({
        ...channels,
        name: 'j',
        body: [
          { op: 'test', path: '/spec/type', value: 1 },
          { op: 'replace', path: '/spec/type', value: 2 },
        ],
      }),
    );
    expect(failed.status).toMatchObject({ code: 422, reason: 'Invalid' });
    expect(fake.get('channels', NS, 'j')?.spec.type).toBe(14);

    const missing = await failure(
      custom.patchNamespacedCustomObject({
        ...channels,
        name: 'j',
        body: [{ op: 'remove', path: '/spec/nothing' }],
      }),
    );
    expect(missing.code).toBe(422);
  });

  it('refuses strategic merge patch on custom resources (415) and applies it to Secrets', async () => {
    await custom.createNamespacedCustomObject({ ...channels, body: channel('s') });
    const refused = await failure(
      custom.patchNamespacedCustomObject({ ...channels, name: 's', body: { spec: { type: 2 } } }, strategicPatch),
    );
    expect(refused.status).toMatchObject({ code: 415, reason: 'UnsupportedMediaType' });

    await core.createNamespacedSecret({
      namespace: NS,
      body: { metadata: { name: 'key' }, stringData: { apiKey: 'sk-1', other: 'x' } },
    });
    const patched = await core.patchNamespacedSecret(
      { name: 'key', namespace: NS, body: { data: { apiKey: Buffer.from('sk-2').toString('base64') } } },
      strategicPatch,
    );
    expect(Buffer.from(patched.data!.apiKey!, 'base64').toString()).toBe('sk-2');
    expect(patched.data!.other).toBe(Buffer.from('x').toString('base64'));
  });

  it('treats strategic merge patch as a merge patch on custom resources when asked to', async () => {
    await fake.close();
    await start({ strategicMergeOnCustomResources: 'merge' });
    await custom.createNamespacedCustomObject({ ...channels, body: channel('s', { type: 1, tag: 'a' }) });
    const obj = await custom.patchNamespacedCustomObject(
      { ...channels, name: 's', body: { spec: { type: 2 } } },
      strategicPatch,
    );
    expect(obj.spec).toEqual({ type: 2, tag: 'a' });
  });

  it('serves server-side apply: create-or-merge, fieldManager required, status through /status', async () => {
    const objects = k8s.KubernetesObjectApi.makeApiClient(kc);
    const applied = await objects.patch(
      channel('ssa', { type: 1, models: ['a'] }, { namespace: NS }) as k8s.KubernetesObject,
      undefined,
      undefined,
      'tollgate-operator',
      true,
      k8s.PatchStrategy.ServerSideApply,
    );
    expect(applied.metadata).toMatchObject({ name: 'ssa', generation: 1 });

    const again = (await objects.patch(
      {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: 'Channel',
        metadata: { name: 'ssa', namespace: NS },
        spec: { priority: 3 },
      } as any,
      undefined,
      undefined,
      'tollgate-operator',
      true,
      k8s.PatchStrategy.ServerSideApply,
    )) as any;
    expect(again.spec).toEqual({ type: 1, models: ['a'], priority: 3 });
    expect(again.metadata.generation).toBe(2);

    const status = await custom.patchNamespacedCustomObjectStatus(
      {
        ...channels,
        name: 'ssa',
        fieldManager: 'tollgate-operator',
        force: true,
        body: {
          apiVersion: `${GROUP}/${VERSION}`,
          kind: 'Channel',
          metadata: { name: 'ssa' },
          status: { channelId: 1 },
          spec: { type: 9 },
        },
      },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.ServerSideApply),
    );
    expect(status.status).toEqual({ channelId: 1 });
    expect(status.spec.type).toBe(1);

    const noManager = await failure(
      custom.patchNamespacedCustomObject(
        { ...channels, name: 'ssa', body: channel('ssa') },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.ServerSideApply),
      ),
    );
    expect(noManager.status).toMatchObject({ code: 422, reason: 'Invalid' });
  });
});

describe('watch', () => {
  beforeEach(() => start());

  /** Opens a raw client-node Watch and collects its events until `stop()`. */
  async function collect(path: string, query: Record<string, string | number | boolean | undefined>) {
    const events: Array<{ type: string; name?: string; rv?: string; object: any }> = [];
    let ended: unknown = 'open';
    const controller = await new k8s.Watch(kc).watch(
      path,
      query,
      (type, object) =>
        events.push({ type, name: object?.metadata?.name, rv: object?.metadata?.resourceVersion, object }),
      (err) => {
        ended = err ?? null;
      },
    );
    return { events, ended: () => ended, stop: () => controller.abort() };
  }

  const path = '/apis/tollgate.dev/v1alpha1/namespaces/default/channels';

  it('lists, then watches from the list resourceVersion, replaying what happened in between', async () => {
    fake.create('channels', channel('a'));
    const list = await custom.listNamespacedCustomObject(channels);
    const listRv = list.metadata.resourceVersion;
    // Changes after the list, before the watch starts.
    fake.create('channels', channel('b'));
    fake.patch('channels', NS, 'a', { spec: { type: 2 } });
    fake.delete('channels', NS, 'b');

    const w = await collect(path, { resourceVersion: listRv });
    await waitFor(() => w.events.length === 3);
    expect(w.events.map((e) => `${e.type} ${e.name} ${e.rv}`)).toEqual(['ADDED b 2', 'MODIFIED a 3', 'DELETED b 4']);

    // Then live.
    fake.create('channels', channel('c'));
    await waitFor(() => w.events.length === 4);
    expect(w.events[3]).toMatchObject({ type: 'ADDED', name: 'c', rv: '5' });
    w.stop();
  });

  it('starts from the current state as ADDED events without a resourceVersion or with "0"', async () => {
    fake.create('channels', channel('a'));
    fake.create('channels', channel('b'));
    fake.patch('channels', NS, 'a', { spec: { type: 5 } });
    for (const query of [{}, { resourceVersion: '0' }]) {
      const w = await collect(path, query);
      await waitFor(() => w.events.length === 2);
      expect(w.events.map((e) => `${e.type} ${e.name} ${e.rv}`)).toEqual(['ADDED a 3', 'ADDED b 2']);
      w.stop();
    }
  });

  it('answers a resourceVersion older than the history window with a 410 Expired ERROR event and ends', async () => {
    fake.create('channels', channel('a'));
    fake.create('channels', channel('b'));
    fake.compactHistory();
    fake.create('channels', channel('c'));
    const w = await collect(path, { resourceVersion: '1' });
    await waitFor(() => w.ended() !== 'open');
    expect(w.events).toHaveLength(1);
    expect(w.events[0]!.type).toBe('ERROR');
    expect(w.events[0]!.object).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Expired', code: 410 });

    // The current version still resumes.
    const ok = await collect(path, { resourceVersion: '2' });
    await waitFor(() => ok.events.length === 1);
    expect(ok.events[0]).toMatchObject({ type: 'ADDED', name: 'c' });
    ok.stop();
  });

  it('keeps a bounded window (historyLimit)', async () => {
    await fake.close();
    await start({ historyLimit: 2 });
    for (const name of ['a', 'b', 'c', 'd']) fake.create('channels', channel(name));
    const old = await collect(path, { resourceVersion: '1' });
    await waitFor(() => old.ended() !== 'open');
    expect(old.events[0]!.object.code).toBe(410);
    const recent = await collect(path, { resourceVersion: '2' });
    await waitFor(() => recent.events.length === 2);
    expect(recent.events.map((e) => e.name)).toEqual(['c', 'd']);
    recent.stop();
  });

  it('sends bookmarks when asked to and ends at timeoutSeconds', async () => {
    const w = await collect(path, { allowWatchBookmarks: true, timeoutSeconds: 1 });
    await fake.waitForWatches(1, 'channels');
    fake.create('channels', channel('a'));
    fake.bookmark();
    await waitFor(() => w.events.length === 2);
    expect(w.events[1]).toMatchObject({ type: 'BOOKMARK', rv: '1' });
    await waitFor(() => w.ended() !== 'open', 3000);
    expect(w.ended()).toBeNull();
  });

  it('filters by label selector, turning objects that start or stop matching into ADDED and DELETED', async () => {
    const w = await collect(path, { labelSelector: 'tier=gold' });
    await fake.waitForWatches(1);
    fake.create('channels', channel('a', undefined, { labels: { tier: 'gold' } }));
    fake.create('channels', channel('b'));
    fake.patch('channels', NS, 'b', { metadata: { labels: { tier: 'gold' } } });
    fake.patch('channels', NS, 'a', { metadata: { labels: { tier: 'silver' } } });
    fake.patch('channels', NS, 'a', { spec: { type: 3 } });
    fake.patch('channels', NS, 'b', { spec: { type: 3 } });
    await waitFor(() => w.events.length === 4);
    expect(w.events.map((e) => `${e.type} ${e.name}`)).toEqual(['ADDED a', 'ADDED b', 'DELETED a', 'MODIFIED b']);
    w.stop();
  });

  it('refuses a malformed resourceVersion and selector with 400', async () => {
    for (const query of ['resourceVersion=abc', 'labelSelector=a%20in%20(', 'fieldSelector=spec.type%3D1']) {
      const res = await fetch(`${fake.url}${path}?watch=true&${query}`, {
        headers: { authorization: `Bearer ${fake.token}` },
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ kind: 'Status', reason: 'BadRequest' });
    }
  });
});

describe('informer', () => {
  beforeEach(() => start());

  function track(informer: k8s.Informer<any> & k8s.ObjectCache<any>) {
    const log: string[] = [];
    const errors: unknown[] = [];
    informer.on('add', (o) => log.push(`add ${o.metadata.name}`));
    informer.on('update', (o) => log.push(`update ${o.metadata.name} type=${o.spec.type}`));
    informer.on('delete', (o) => log.push(`delete ${o.metadata.name}`));
    informer.on('error', (e) => errors.push(e));
    const cacheMatchesServer = () => {
      const cached = informer
        .list(NS)
        .map((o: any) => `${o.metadata.name}@${o.metadata.resourceVersion}`)
        .sort();
      const real = fake
        .objects('channels', NS)
        .map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`)
        .sort();
      return JSON.stringify(cached) === JSON.stringify(real);
    };
    return { log, errors, cacheMatchesServer };
  }

  function channelInformer() {
    return k8s.makeInformer(kc, '/apis/tollgate.dev/v1alpha1/namespaces/default/channels', () =>
      custom.listNamespacedCustomObject(channels),
    );
  }

  it('sees every change across a watch that ends, one that breaks, and one that expires', async () => {
    fake.create('channels', channel('a'));
    const informer = channelInformer();
    const { log, errors, cacheMatchesServer } = track(informer);
    await informer.start();
    await fake.waitForWatches(1, 'channels');
    expect(log).toEqual(['add a']);

    // Live changes.
    fake.create('channels', channel('b'));
    fake.patch('channels', NS, 'a', { spec: { type: 2 } });
    await waitFor(() => log.length === 3);

    // 1. The server ends the watch cleanly (as its watch timeout does): the informer re-watches from its
    //    last resourceVersion, without listing again, and the history replays what it missed.
    const listsBefore = fake.requestCount({ verb: 'list' });
    fake.dropWatches({ graceful: true });
    fake.create('channels', channel('c'));
    await fake.waitForWatches(1, 'channels');
    await waitFor(() => log.length === 4);
    expect(log[3]).toBe('add c');
    expect(fake.requestCount({ verb: 'list' })).toBe(listsBefore);

    // 2. The connection breaks mid-stream: client-node 2.0.1 reports an error and stops; restarting resumes
    //    from the last resourceVersion (no re-list, no repeated adds) and replays the missed events.
    fake.dropWatches();
    await waitFor(() => errors.length === 1);
    fake.patch('channels', NS, 'b', { spec: { type: 3 } });
    fake.delete('channels', NS, 'c');
    await informer.start();
    await waitFor(() => log.length === 6);
    expect(log.slice(4)).toEqual(['update b type=3', 'delete c']);
    expect(fake.requestCount({ verb: 'list' })).toBe(listsBefore);

    // 3. The history is compacted while the informer is away: its watch gets 410 Expired, it lists again and
    //    resumes; the list shows the deletion, the new object and the update it never saw as events.
    await fake.waitForWatches(1, 'channels');
    fake.dropWatches({ graceful: true });
    fake.delete('channels', NS, 'a');
    fake.create('channels', channel('d'));
    fake.patch('channels', NS, 'b', { spec: { type: 4 } });
    fake.compactHistory();
    await waitFor(() => log.length === 9, 5000);
    expect(log.slice(6).sort()).toEqual(['add d', 'delete a', 'update b type=4']);
    expect(fake.requestCount({ verb: 'list' })).toBe(listsBefore + 1);
    expect(errors).toHaveLength(1);

    // And it is live again afterwards.
    await fake.waitForWatches(1, 'channels');
    fake.create('channels', channel('e'));
    await waitFor(() => log.length === 10);
    expect(cacheMatchesServer()).toBe(true);
    await informer.stop();
  });

  it('re-lists after an HTTP 410 on the watch and reports other failures as errors', async () => {
    fake.create('channels', channel('a'));
    const informer = channelInformer();
    const { log, errors, cacheMatchesServer } = track(informer);
    await informer.start();
    await fake.waitForWatches(1, 'channels');

    fake.failNext(1, { code: 410, reason: 'Gone', message: 'too old' }, { verb: 'watch', resource: 'channels' });
    fake.dropWatches({ graceful: true });
    fake.create('channels', channel('b'));
    await waitFor(() => log.includes('add b'));
    await fake.waitForWatches(1, 'channels');
    expect(fake.requestCount({ verb: 'list' })).toBe(2);
    // A watch event resets client-node's reconnect backoff.
    fake.create('channels', channel('b2'));
    await waitFor(() => log.includes('add b2'));

    fake.failNext(1, 500, { verb: 'list' });
    fake.failNext(1, 410, { verb: 'watch' });
    fake.dropWatches({ graceful: true });
    await waitFor(() => errors.length === 1, 5000);
    expect((errors[0] as k8s.ApiException<unknown>).code).toBe(500);
    fake.create('channels', channel('c'));
    await informer.start();
    await waitFor(() => log.includes('add c'), 5000);
    expect(cacheMatchesServer()).toBe(true);
    await informer.stop();
  });

  it('watches Secrets by label across namespaces', async () => {
    const informer = k8s.makeInformer(
      kc,
      '/api/v1/secrets',
      () => core.listSecretForAllNamespaces({ labelSelector: 'tollgate.dev/channel-secret=true' }),
      'tollgate.dev/channel-secret=true',
    );
    const seen: string[] = [];
    informer.on('add', (s) => seen.push(`add ${s.metadata?.namespace}/${s.metadata?.name}`));
    informer.on('update', (s) => seen.push(`update ${s.metadata?.namespace}/${s.metadata?.name}`));
    informer.on('delete', (s) => seen.push(`delete ${s.metadata?.namespace}/${s.metadata?.name}`));
    fake.create('secrets', {
      metadata: { name: 'k1', namespace: 'a', labels: { 'tollgate.dev/channel-secret': 'true' } },
    });
    fake.create('secrets', { metadata: { name: 'other', namespace: 'a' } });
    await informer.start();
    await fake.waitForWatches(1, 'secrets');
    fake.create('secrets', {
      metadata: { name: 'k2', namespace: 'b', labels: { 'tollgate.dev/channel-secret': 'true' } },
    });
    fake.patch('secrets', 'a', 'k1', { stringData: { apiKey: 'new' } }, { type: 'strategic' });
    fake.patch('secrets', 'a', 'other', { data: { x: 'eA==' } });
    fake.delete('secrets', 'b', 'k2');
    await waitFor(() => seen.length === 4);
    expect(seen).toEqual(['add a/k1', 'add b/k2', 'update a/k1', 'delete b/k2']);
    await informer.stop();
  });
});

describe('selectors and lists', () => {
  beforeEach(() => start());

  it('lists with label and field selectors, in one namespace or all', async () => {
    fake.create('channels', channel('a', undefined, { labels: { tier: 'gold', region: 'eu' } }));
    fake.create('channels', channel('b', undefined, { labels: { tier: 'silver' } }));
    fake.create('channels', channel('c'));
    fake.create('channels', channel('d', undefined, { namespace: 'team', labels: { tier: 'gold' } }));
    const names = async (labelSelector?: string, fieldSelector?: string) => {
      const list = await custom.listNamespacedCustomObject({ ...channels, labelSelector, fieldSelector });
      return list.items.map((i: any) => i.metadata.name);
    };
    expect(await names('tier=gold')).toEqual(['a']);
    expect(await names('tier==gold')).toEqual(['a']);
    expect(await names('tier!=gold')).toEqual(['b', 'c']);
    expect(await names('tier')).toEqual(['a', 'b']);
    expect(await names('!tier')).toEqual(['c']);
    expect(await names('tier,region=eu')).toEqual(['a']);
    expect(await names('tier in (gold, silver)')).toEqual(['a', 'b']);
    expect(await names('tier notin (gold)')).toEqual(['b', 'c']);
    expect(await names(undefined, 'metadata.name=b')).toEqual(['b']);
    expect(await names(undefined, 'metadata.name!=b')).toEqual(['a', 'c']);

    const all = await custom.listClusterCustomObject({
      group: GROUP,
      version: VERSION,
      plural: 'channels',
      labelSelector: 'tier=gold',
    });
    expect(all.items.map((i: any) => `${i.metadata.namespace}/${i.metadata.name}`)).toEqual(['default/a', 'team/d']);

    const bad = await failure(custom.listNamespacedCustomObject({ ...channels, fieldSelector: 'spec.type=1' }));
    expect(bad.status).toMatchObject({ code: 400, reason: 'BadRequest' });
  });

  it('pages with limit and continue', async () => {
    for (const name of ['a', 'b', 'c', 'd', 'e']) fake.create('channels', channel(name));
    const first = await custom.listNamespacedCustomObject({ ...channels, limit: 2 });
    expect(first.items.map((i: any) => i.metadata.name)).toEqual(['a', 'b']);
    expect(first.metadata.remainingItemCount).toBe(3);
    const second = await custom.listNamespacedCustomObject({
      ...channels,
      limit: 2,
      _continue: first.metadata.continue,
    });
    expect(second.items.map((i: any) => i.metadata.name)).toEqual(['c', 'd']);
    const third = await custom.listNamespacedCustomObject({
      ...channels,
      limit: 2,
      _continue: second.metadata.continue,
    });
    expect(third.items.map((i: any) => i.metadata.name)).toEqual(['e']);
    expect(third.metadata.continue).toBeUndefined();
  });
});

describe('built-in kinds', () => {
  beforeEach(() => start());

  it('stores Secrets as the API does: stringData folded into data, type Opaque, no generation', async () => {
    const created = await core.createNamespacedSecret({
      namespace: NS,
      body: { metadata: { name: 'channel-key', labels: { app: 'x' } }, stringData: { apiKey: 'sk-test' } },
    });
    expect(created.type).toBe('Opaque');
    expect(created.data).toEqual({ apiKey: Buffer.from('sk-test').toString('base64') });
    expect((created as any).stringData).toBeUndefined();
    expect(created.metadata?.generation).toBeUndefined();

    const list = await core.listNamespacedSecret({ namespace: NS, labelSelector: 'app=x' });
    expect(list.metadata?.resourceVersion).toBe('1');
    expect(list.items.map((s) => s.metadata?.name)).toEqual(['channel-key']);
    const everywhere = await core.listSecretForAllNamespaces({ fieldSelector: 'type=Opaque' });
    expect(everywhere.items).toHaveLength(1);

    // Secrets take an update without resourceVersion; with a stale one it is 409.
    const replaced = await core.replaceNamespacedSecret({
      name: 'channel-key',
      namespace: NS,
      body: { metadata: { name: 'channel-key' }, data: { apiKey: Buffer.from('sk-2').toString('base64') } },
    });
    expect(replaced.metadata?.resourceVersion).toBe('2');
    const stale = await failure(
      core.replaceNamespacedSecret({ name: 'channel-key', namespace: NS, body: { ...created, data: {} } }),
    );
    expect(stale.code).toBe(409);

    const deleted = await core.deleteNamespacedSecret({ name: 'channel-key', namespace: NS });
    expect(deleted.status).toBe('Success');
  });

  it('serves Leases with optimistic concurrency, as leader election needs', async () => {
    const leases = kc.makeApiClient(k8s.CoordinationV1Api);
    const now = new Date();
    const lease = await leases.createNamespacedLease({
      namespace: NS,
      body: {
        metadata: { name: 'tollgate-operator' },
        spec: {
          holderIdentity: 'pod-a',
          leaseDurationSeconds: 15,
          acquireTime: now,
          renewTime: now,
          leaseTransitions: 0,
        },
      },
    });
    expect(lease.spec?.holderIdentity).toBe('pod-a');
    // client-node 2.0.1 leaves MicroTime fields as strings; the server writes six fractional digits.
    expect(lease.spec?.renewTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(lease.metadata?.generation).toBeUndefined();

    // Two candidates read the same version; the first write wins, the second gets 409 and must re-read.
    const seenByA = await leases.readNamespacedLease({ name: 'tollgate-operator', namespace: NS });
    const seenByB = await leases.readNamespacedLease({ name: 'tollgate-operator', namespace: NS });
    const renewed = await leases.replaceNamespacedLease({
      name: 'tollgate-operator',
      namespace: NS,
      body: { ...seenByA, spec: { ...seenByA.spec, renewTime: new Date(now.getTime() + 2000) } },
    });
    expect(Number(renewed.metadata?.resourceVersion)).toBeGreaterThan(Number(seenByA.metadata?.resourceVersion));
    const takeover = await failure(
      leases.replaceNamespacedLease({
        name: 'tollgate-operator',
        namespace: NS,
        body: { ...seenByB, spec: { ...seenByB.spec, holderIdentity: 'pod-b', leaseTransitions: 1 } },
      }),
    );
    expect(takeover.status).toMatchObject({ code: 409, reason: 'Conflict' });
    expect(fake.get('leases', NS, 'tollgate-operator')?.spec.holderIdentity).toBe('pod-a');

    // The same Lease as raw JSON through the generic custom-objects client.
    const raw = await custom.getNamespacedCustomObject({
      group: 'coordination.k8s.io',
      version: 'v1',
      namespace: NS,
      plural: 'leases',
      name: 'tollgate-operator',
    });
    expect(raw).toMatchObject({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      spec: { holderIdentity: 'pod-a' },
    });
  });
});

describe('server controls', () => {
  it('runs the validation hook on every write, status included', async () => {
    await start({
      validate: (kind, object) =>
        kind === 'Channel' && !Array.isArray(object.spec?.models)
          ? ['spec.models: Required value']
          : kind === 'Channel' && object.status?.state === 'bogus'
            ? ['status.state: Unsupported value: "bogus"']
            : [],
    });
    const invalid = await failure(
      custom.createNamespacedCustomObject({ ...channels, body: channel('v', { type: 1 }) }),
    );
    expect(invalid.status).toMatchObject({
      code: 422,
      reason: 'Invalid',
      message: 'Channel.tollgate.dev "v" is invalid: spec.models: Required value',
      details: { name: 'v', group: 'tollgate.dev', kind: 'Channel', causes: [{ field: 'spec.models' }] },
    });
    await custom.createNamespacedCustomObject({ ...channels, body: channel('v') });
    const badStatus = await failure(
      custom.patchNamespacedCustomObjectStatus(
        { ...channels, name: 'v', body: { status: { state: 'bogus' } } },
        mergePatch,
      ),
    );
    expect(badStatus.code).toBe(422);
  });

  it('injects failures, counts requests and checks the token', async () => {
    await start();
    fake.failNext(2, 503, { verb: 'create' });
    const first = await failure(custom.createNamespacedCustomObject({ ...channels, body: channel('f') }));
    expect(first.status).toMatchObject({ code: 503, reason: 'ServiceUnavailable' });
    await failure(custom.createNamespacedCustomObject({ ...channels, body: channel('f') }));
    await custom.createNamespacedCustomObject({ ...channels, body: channel('f') });
    expect(fake.requestCount({ verb: 'create', resource: 'Channel' })).toBe(3);
    expect(fake.requests.map((r) => r.status)).toEqual([503, 503, 201]);
    fake.resetRequests();
    expect(fake.requests).toHaveLength(0);

    const stranger = new k8s.KubeConfig();
    stranger.loadFromOptions({
      clusters: [{ name: 'c', server: fake.url, skipTLSVerify: true }],
      users: [{ name: 'u', token: 'wrong' }],
      contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
      currentContext: 'c',
    });
    const denied = await failure(stranger.makeApiClient(k8s.CoreV1Api).listNamespacedSecret({ namespace: NS }));
    expect(denied.code).toBe(401);
  });

  it('serves any custom resource path and the discovery documents', async () => {
    await start({ resources: [{ group: 'example.com', version: 'v1', plural: 'widgets', kind: 'Widget' }] });
    const widget = await custom.createNamespacedCustomObject({
      group: 'example.com',
      version: 'v1',
      namespace: NS,
      plural: 'widgets',
      body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { size: 1 } },
    });
    expect(widget.kind).toBe('Widget');
    const guessed = await custom.createNamespacedCustomObject({
      group: 'other.io',
      version: 'v2',
      namespace: NS,
      plural: 'gadgets',
      body: { apiVersion: 'other.io/v2', kind: 'Gadget', metadata: { name: 'g' } },
    });
    expect(guessed).toMatchObject({ kind: 'Gadget', metadata: { generation: 1 } });

    const discovery = await fetch(`${fake.url}/apis/tollgate.dev/v1alpha1`, {
      headers: { authorization: `Bearer ${fake.token}` },
    }).then((r) => r.json() as Promise<any>);
    expect(discovery.resources.map((r: any) => r.name)).toEqual([
      'accesstokens',
      'accesstokens/status',
      'channels',
      'channels/status',
      'gatewaysettings',
      'gatewaysettings/status',
      'groups',
      'groups/status',
      'modelprices',
      'modelprices/status',
    ]);
    const objects = k8s.KubernetesObjectApi.makeApiClient(kc);
    const read = await objects
      .read({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'missing', namespace: NS } })
      .catch((e) => e);
    expect(read.code).toBe(404);
    const group = await objects.create({
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'Group',
      metadata: { name: 'vip', namespace: NS },
      spec: { ratio: 2 },
    } as any);
    expect(group.metadata?.generation).toBe(1);
  });

  it('closes with watches open', async () => {
    await start();
    const informer = k8s.makeInformer(kc, '/apis/tollgate.dev/v1alpha1/namespaces/default/channels', () =>
      custom.listNamespacedCustomObject(channels),
    );
    informer.on('error', () => {});
    await informer.start();
    await fake.waitForWatches(1);
    await fake.close();
    await informer.stop();
    await sleep(10);
  });
});

describe('CRD schemas (served by default)', () => {
  beforeEach(() => start({ schemas: true }));

  const keyed = (name: string, spec: Record<string, unknown> = {}) =>
    channel(name, { type: 1, models: ['gpt-4o'], keySecretRef: { name: 'openai-key' }, ...spec });

  it('prunes unknown fields with a warning, keeps preserved ones, drops nulls and applies defaults on create', async () => {
    const created = await custom.createNamespacedCustomObject({
      ...channels,
      body: {
        ...keyed('p', { bogus: 1, tag: null, paramOverride: { temperature: 0.2, nested: { any: true } } }),
        topLevel: 'x',
        status: { channelId: 3 },
      },
    });
    expect(created.spec).toEqual({
      type: 1,
      models: ['gpt-4o'],
      keySecretRef: { name: 'openai-key', key: 'apiKey' },
      multiKeyMode: 'random',
      groups: ['default'],
      priority: 0,
      weight: 0,
      autoBan: true,
      enabled: true,
      paramOverride: { temperature: 0.2, nested: { any: true } },
    });
    expect(created).not.toHaveProperty('topLevel');
    expect(created).not.toHaveProperty('status');
    const record = fake.requests.at(-1)!;
    expect(record.warnings).toEqual(['unknown field "spec.bogus"', 'unknown field "topLevel"']);

    const raw = await fetch(`${fake.url}/apis/${GROUP}/${VERSION}/namespaces/${NS}/channels?fieldManager=t`, {
      method: 'POST',
      headers: { authorization: `Bearer ${fake.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(keyed('q', { extra: true })),
    });
    expect(raw.status).toBe(201);
    expect(raw.headers.get('warning')).toBe('299 - "unknown field \\"spec.extra\\""');
  });

  it('prunes main-resource and status writes, so unknown fields never bump generation or reach status', async () => {
    const created = await custom.createNamespacedCustomObject({ ...channels, body: keyed('g') });
    const replaced = await custom.replaceNamespacedCustomObject({
      ...channels,
      name: 'g',
      body: { ...created, spec: { ...created.spec, unknownSetting: 'x' } },
    });
    expect(replaced.metadata.generation).toBe(1);
    expect(replaced.metadata.resourceVersion).toBe(created.metadata.resourceVersion); // a no-op after pruning
    const patched = await custom.patchNamespacedCustomObjectStatus(
      { ...channels, name: 'g', body: { status: { channelId: 7, phase: 'unknown-to-the-schema' } } },
      mergePatch,
    );
    expect(patched.status).toEqual({ channelId: 7 });
    expect(fake.get('channels', NS, 'g')?.status).toEqual({ channelId: 7 });
  });

  it('refuses unknown fields with fieldValidation=Strict (400) and a bad directive (422)', async () => {
    const post = (query: string) =>
      fetch(`${fake.url}/apis/${GROUP}/${VERSION}/namespaces/${NS}/channels?${query}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${fake.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(keyed('s', { extra: true })),
      });
    const strict = await post('fieldValidation=Strict');
    expect(strict.status).toBe(400);
    expect(((await strict.json()) as any).message).toBe(
      'Channel in version "v1alpha1" cannot be handled as a Channel: strict decoding error: unknown field "spec.extra"',
    );
    const bad = await post('fieldValidation=Loud');
    expect(bad.status).toBe(422);
    expect(((await bad.json()) as any).message).toContain('fieldValidation: Unsupported value: "Loud"');
    expect(fake.get('channels', NS, 's')).toBeUndefined();
    expect((await post('fieldValidation=Ignore')).headers.get('warning')).toBeNull();
  });

  it('validates against the OpenAPI schema and the CEL rules: 422 Invalid with causes', async () => {
    const missing = await failure(
      custom.createNamespacedCustomObject({
        ...channels,
        body: channel('v', { type: 1, keySecretRef: { name: 'k' } }),
      }),
    );
    expect(missing.status).toMatchObject({
      code: 422,
      reason: 'Invalid',
      message: 'Channel.tollgate.dev "v" is invalid: spec.models: Required value',
      details: { kind: 'Channel', causes: [{ reason: 'FieldValueRequired', field: 'spec.models' }] },
    });
    const cel = await failure(
      custom.createNamespacedCustomObject({ ...channels, body: keyed('c', { baseURL: 'ftp://x' }) }),
    );
    expect(cel.status.message).toContain(
      'spec.baseURL: Invalid value: baseURL must start with http:// or https:// followed by a host',
    );
    await custom.createNamespacedCustomObject({ ...channels, body: keyed('ok') });
    const badStatus = await failure(
      custom.patchNamespacedCustomObjectStatus(
        {
          ...channels,
          name: 'ok',
          body: {
            status: {
              conditions: [{ type: 'Ready', status: 'Maybe', reason: 'X', message: '', lastTransitionTime: 'now' }],
            },
          },
        },
        mergePatch,
      ),
    );
    expect(badStatus.code).toBe(422);
    expect(badStatus.status.details.causes.map((c: any) => c.field)).toEqual(
      expect.arrayContaining(['status.conditions[0].status', 'status.conditions[0].lastTransitionTime']),
    );
  });
});

describe('RBAC', () => {
  const user = 'system:serviceaccount:tollgate:operator';
  const rbac = {
    user,
    clusterRules: [{ apiGroups: [GROUP], resources: ['channels'], verbs: ['get', 'list', 'watch'] }],
    namespaceRules: {
      tollgate: [
        { apiGroups: [GROUP], resources: ['channels/status'], verbs: ['patch'] },
        { apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: ['allowed'] },
        { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
      ],
    },
  };

  it('answers what the rules do not grant with kube-apiserver 403s; the admin client is never restricted', async () => {
    await start({ rbac });
    const admin = fake.adminKubeConfig().makeApiClient(k8s.CustomObjectsApi);
    const adminCore = fake.adminKubeConfig().makeApiClient(k8s.CoreV1Api);
    const inTollgate = { ...channels, namespace: 'tollgate' };
    await admin.createNamespacedCustomObject({ ...inTollgate, body: channel('a') });
    await adminCore.createNamespacedSecret({ namespace: 'tollgate', body: { metadata: { name: 'allowed' } } });
    await adminCore.createNamespacedSecret({ namespace: 'tollgate', body: { metadata: { name: 'other' } } });

    // Granted: cluster-wide reads, a status patch in its namespace, a named Secret, creating Secrets.
    expect(
      (await custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: 'channels' })).items,
    ).toHaveLength(1);
    await custom.patchNamespacedCustomObjectStatus(
      { ...inTollgate, name: 'a', body: { status: { x: 1 } } },
      mergePatch,
    );
    await core.readNamespacedSecret({ namespace: 'tollgate', name: 'allowed' });
    await core.createNamespacedSecret({ namespace: 'tollgate', body: { metadata: { name: 'made' } } });

    const listSecrets = await failure(core.listNamespacedSecret({ namespace: 'tollgate' }));
    expect(listSecrets).toEqual({
      code: 403,
      status: {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: `secrets is forbidden: User "${user}" cannot list resource "secrets" in API group "" in the namespace "tollgate"`,
        reason: 'Forbidden',
        details: { group: '', kind: 'secrets' },
        code: 403,
      },
    });
    const otherSecret = await failure(core.readNamespacedSecret({ namespace: 'tollgate', name: 'other' }));
    expect(otherSecret.status.message).toBe(
      `secrets "other" is forbidden: User "${user}" cannot get resource "secrets" in API group "" in the namespace "tollgate"`,
    );
    const statusElsewhere = await failure(
      custom.patchNamespacedCustomObjectStatus({ ...channels, name: 'a', body: { status: {} } }, mergePatch),
    );
    expect(statusElsewhere.status.message).toBe(
      `channels.tollgate.dev "a" is forbidden: User "${user}" cannot patch resource "channels/status" in API group "tollgate.dev" in the namespace "default"`,
    );
    const update = await failure(
      custom.replaceNamespacedCustomObject({ ...inTollgate, name: 'a', body: channel('a') }),
    );
    expect(update.code).toBe(403);
    const clusterSecrets = await failure(core.listSecretForAllNamespaces());
    expect(clusterSecrets.status.message).toBe(
      `secrets is forbidden: User "${user}" cannot list resource "secrets" in API group "" at the cluster scope`,
    );
    expect(fake.get('channels', 'tollgate', 'a')?.status).toEqual({ x: 1 });

    // A list narrowed to one name by field selector is authorized for that name (resourceNames).
    const byName = await fetch(`${fake.url}/api/v1/namespaces/tollgate/secrets?fieldSelector=metadata.name%3Dallowed`, {
      headers: { authorization: `Bearer ${fake.token}` },
    });
    expect(byName.status).toBe(403); // the rule grants get, not list

    expect(fake.apiCalls({ user })).toEqual([
      { verb: 'list', group: GROUP, resource: 'channels' },
      { verb: 'patch', group: GROUP, resource: 'channels/status', namespace: 'tollgate' },
      { verb: 'get', group: '', resource: 'secrets', namespace: 'tollgate' },
      { verb: 'create', group: '', resource: 'secrets', namespace: 'tollgate' },
      { verb: 'list', group: '', resource: 'secrets', namespace: 'tollgate' },
      { verb: 'patch', group: GROUP, resource: 'channels/status', namespace: NS },
      { verb: 'update', group: GROUP, resource: 'channels', namespace: 'tollgate' },
      { verb: 'list', group: '', resource: 'secrets' },
    ]);
    expect(fake.requestCount({ verb: 'create' })).toBe(4);
    expect(fake.requests.filter((r) => r.user === 'fake-kube-admin')).toHaveLength(3);
  });

  it('matches wildcards, */subresource rules and watch by name as RBAC does', async () => {
    await start({
      rbac: {
        user,
        clusterRules: [
          { apiGroups: ['*'], resources: ['*/status'], verbs: ['get'] },
          { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['*'], resourceNames: ['lock'] },
        ],
      },
    });
    fake.create('channels', channel('a'));
    expect((await custom.getNamespacedCustomObjectStatus({ ...channels, name: 'a' })).metadata.name).toBe('a');
    expect((await failure(custom.getNamespacedCustomObject({ ...channels, name: 'a' }))).code).toBe(403);
    const leases = kc.makeApiClient(k8s.CoordinationV1Api);
    await leases.createNamespacedLease({ namespace: NS, body: { metadata: { name: 'lock' } } }).catch(() => {});
    expect(fake.get('leases', NS, 'lock')).toBeUndefined(); // create carries no name: resourceNames never grant it
    fake.create('leases', { metadata: { name: 'lock', namespace: NS } });
    await leases.readNamespacedLease({ namespace: NS, name: 'lock' });
    const watch = await fetch(
      `${fake.url}/apis/coordination.k8s.io/v1/namespaces/${NS}/leases?watch=true&fieldSelector=metadata.name%3Dlock&timeoutSeconds=1`,
      { headers: { authorization: `Bearer ${fake.token}` } },
    );
    expect(watch.status).toBe(200);
    await watch.body?.cancel();
  });

  it('enforces OwnerReferencesPermissionEnforcement only when asked to', async () => {
    const owner = { apiVersion: `${GROUP}/${VERSION}`, kind: 'AccessToken', name: 'tok', uid: 'u-1' };
    const secret = (name: string) => ({
      metadata: { name, ownerReferences: [{ ...owner, controller: true, blockOwnerDeletion: true }] },
    });
    const rules = [{ apiGroups: [''], resources: ['secrets'], verbs: ['create', 'update'] }];

    await start({ rbac: { user, namespaceRules: { [NS]: rules } } });
    await core.createNamespacedSecret({ namespace: NS, body: secret('upstream') }); // plugin off upstream
    await fake.close();

    await start({ rbac: { user, namespaceRules: { [NS]: rules }, ownerReferencesPermissionEnforcement: true } });
    const refused = await failure(core.createNamespacedSecret({ namespace: NS, body: secret('openshift') }));
    expect(refused.status).toMatchObject({
      code: 403,
      reason: 'Forbidden',
      message:
        'secrets "openshift" is forbidden: cannot set blockOwnerDeletion if an ownerReference refers to a resource you can\'t set finalizers on: , <nil>',
    });
    await fake.close();

    const finalizers = { apiGroups: [GROUP], resources: ['accesstokens/finalizers'], verbs: ['update'] };
    await start({
      rbac: { user, namespaceRules: { [NS]: [...rules, finalizers] }, ownerReferencesPermissionEnforcement: true },
    });
    const made = await core.createNamespacedSecret({ namespace: NS, body: secret('openshift') });
    // Changing the owner references of an existing object also needs delete on it.
    const changed = await failure(
      core.replaceNamespacedSecret({
        namespace: NS,
        name: 'openshift',
        body: { ...made, metadata: { ...made.metadata, ownerReferences: [] } },
      }),
    );
    expect(changed.status.message).toBe(
      'secrets "openshift" is forbidden: cannot set an ownerRef on a resource you can\'t delete: , <nil>',
    );
  });
});

describe('rbacFromManifests', () => {
  const rendered = `
---
# Source: tollgate/templates/operator-rbac.yaml
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: tollgate-operator-read
rules:
  - apiGroups: [tollgate.dev]
    resources: [channels]
    verbs: [list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: tollgate-operator-aggregate
aggregationRule:
  clusterRoleSelectors:
    - matchLabels: { tollgate.dev/aggregate: "true" }
rules: []
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: tollgate-extra
  labels: { tollgate.dev/aggregate: "true" }
rules:
  - apiGroups: [coordination.k8s.io]
    resources: [leases]
    verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: tollgate-operator
rules:
  - apiGroups: [""]
    resources: [secrets]
    verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: tollgate-operator
subjects:
  - kind: ServiceAccount
    name: tollgate-operator
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: Role, name: tollgate-operator }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: tollgate-operator-team-a
  namespace: team-a
subjects:
  - kind: ServiceAccount
    name: tollgate-operator
    namespace: tollgate
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: tollgate-operator-aggregate }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: tollgate-operator-read
subjects:
  - kind: ServiceAccount
    name: tollgate-operator
    namespace: tollgate
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: tollgate-operator-read }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: someone-else
subjects:
  - kind: ServiceAccount
    name: gateway
    namespace: tollgate
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: tollgate-extra }
`;

  it('collects the rules bound to one service account, per namespace and cluster-wide', () => {
    const policy = rbacFromManifests(rendered, { namespace: 'tollgate', name: 'tollgate-operator' });
    expect(policy).toEqual({
      user: 'system:serviceaccount:tollgate:tollgate-operator',
      clusterRules: [{ apiGroups: ['tollgate.dev'], resources: ['channels'], verbs: ['list', 'watch'] }],
      namespaceRules: {
        tollgate: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch'] }],
        'team-a': [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get'] }],
      },
    });
    expect(rbacFromManifests(rendered, { namespace: 'tollgate', name: 'nobody' })).toMatchObject({
      clusterRules: [],
      namespaceRules: {},
    });
  });

  it('drives the server: what the chart does not grant is 403', async () => {
    await start({
      rbac: rbacFromManifests(
        rendered,
        { namespace: 'tollgate', name: 'tollgate-operator' },
        { namespace: 'tollgate' },
      ),
    });
    await core.listNamespacedSecret({ namespace: 'tollgate' });
    expect((await failure(core.listNamespacedSecret({ namespace: 'team-a' }))).code).toBe(403);
  });
});

describe('Events', () => {
  beforeEach(() => start());

  it('accepts core/v1 and events.k8s.io/v1 Events: create, list and patch', async () => {
    const involved = { apiVersion: `${GROUP}/${VERSION}`, kind: 'Channel', name: 'a', namespace: NS };
    await core.createNamespacedEvent({
      namespace: NS,
      body: {
        metadata: { generateName: 'a.' },
        involvedObject: involved,
        reason: 'SecretMissing',
        message: 'no Secret',
        type: 'Warning',
      },
    });
    const eventsApi = kc.makeApiClient(k8s.EventsV1Api);
    const created = await eventsApi.createNamespacedEvent({
      namespace: NS,
      body: {
        metadata: { name: 'a.1' },
        eventTime: new Date() as any,
        regarding: involved,
        reason: 'InvalidSpec',
        action: 'Reconcile',
        note: 'bad',
        type: 'Warning',
        reportingController: 'tollgate.dev/operator',
        reportingInstance: 'pod-1',
      },
    });
    const patched = await eventsApi.patchNamespacedEvent(
      { namespace: NS, name: 'a.1', body: [{ op: 'replace', path: '/note', value: 'still bad' }] },
      jsonPatch,
    );
    expect(patched.note).toBe('still bad');
    expect(patched.metadata?.resourceVersion).not.toBe(created.metadata?.resourceVersion);
    expect((await core.listNamespacedEvent({ namespace: NS })).items.map((e) => e.reason)).toEqual(['SecretMissing']);
    expect((await eventsApi.listNamespacedEvent({ namespace: NS })).items.map((e) => e.reason)).toEqual([
      'InvalidSpec',
    ]);
  });

  it('validates Events as kube-apiserver does', async () => {
    const incomplete = await failure(
      kc.makeApiClient(k8s.EventsV1Api).createNamespacedEvent({
        namespace: NS,
        body: { metadata: { name: 'e' }, eventTime: new Date() as any, reason: 'X', type: 'Info' },
      }),
    );
    expect(incomplete.status).toMatchObject({ code: 422, reason: 'Invalid' });
    expect(incomplete.status.details.causes.map((c: any) => `${c.field}: ${c.message}`)).toEqual([
      'reportingController: Required value',
      'reportingInstance: Required value',
      'action: Required value',
      'type: Invalid value: "": has invalid value: Info',
    ]);
    const elsewhere = await failure(
      core.createNamespacedEvent({
        namespace: NS,
        body: { metadata: { name: 'e' }, involvedObject: { kind: 'Channel', name: 'a', namespace: 'other' } },
      }),
    );
    expect(elsewhere.status.message).toBe(
      'Event "e" is invalid: involvedObject.namespace: Invalid value: "other": does not match event.namespace',
    );
  });
});
