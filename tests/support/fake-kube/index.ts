import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import type { RbacPolicy } from './authorize.ts';
import {
  BUILT_IN_RESOURCES,
  type ResourceDefinition,
  ResourceRegistry,
  type ResourceType,
  TOLLGATE_RESOURCES,
} from './resources.ts';
import {
  type ApiCall,
  FakeKubeServer,
  type InjectedFailure,
  type RecordedRequest,
  type RequestMatch,
} from './server.ts';
import { type KubeObject, PATCH_TYPES, Store, type StoreEvent, type Validator } from './store.ts';
import { WatchHub } from './watch.ts';

export type { PolicyRule, RbacPolicy, RequestAttributes } from './authorize.ts';
export type { KubeStatus } from './errors.ts';
export type { ResourceDefinition, ResourceType } from './resources.ts';
export {
  BUILT_IN_RESOURCES,
  crdResource,
  TOLLGATE_GROUP,
  TOLLGATE_RESOURCES,
  TOLLGATE_VERSION,
} from './resources.ts';
export type { FieldValidation } from './schema.ts';
export type { ApiCall, InjectedFailure, RecordedRequest, RequestMatch, Verb } from './server.ts';
export { ADMIN_USER } from './server.ts';
export type { KubeObject, ObjectMeta, StoreEvent, Validator } from './store.ts';

export interface FakeKubeOptions {
  /** Extra kinds, next to the built-in ones and the CRDs of the repo's crds/ folder (`crdResource(crd)` turns a CRD into one). */
  resources?: ResourceDefinition[];
  /**
   * Serve the crds/ kinds with their openAPIV3Schema (default true): writes are pruned, defaulted and validated
   * as kube-apiserver does. `false` serves them schema-less, for tests of API mechanics with partial objects.
   */
  schemas?: boolean;
  /**
   * RBAC for the token (and every kubeConfig() client): requests the rules do not grant are 403 Forbidden.
   * Absent: the token may do anything. `adminKubeConfig()` is never restricted. See rbac.ts to build it from
   * rendered chart YAML.
   */
  rbac?: RbacPolicy;
  /** Serve unknown plurals of non-built-in groups as namespaced custom resources (Kind guessed from the plural, or taken from the first object created). Default true. */
  autoRegister?: boolean;
  /** Schema hook: messages returned make a create/update/patch (status included) a 422 Invalid. */
  validate?: Validator;
  /** Events kept for watches resuming from a resourceVersion; older ones get 410 Expired. Default 1000. */
  historyLimit?: number;
  /** Bearer token the server requires (and kubeConfig() sends). Default `fake-kube-token`; `null` disables auth. */
  token?: string | null;
  /** Namespace of the kubeConfig() context. Default `default`. */
  namespace?: string;
  /** `reject` (default, as kube-apiserver): strategic merge patch on a custom resource is 415; `merge`: applied as a merge patch. */
  strategicMergeOnCustomResources?: 'reject' | 'merge';
  /** Send BOOKMARK events this often to watches with allowWatchBookmarks=true. Default 0: only when bookmark() is called. */
  bookmarkIntervalMs?: number;
  /** Listen address; default 127.0.0.1 and a free port. */
  host?: string;
  port?: number;
}

export type PatchType = keyof typeof PATCH_TYPES;

export interface FakeKube {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  token: string | null;
  /** A client-node KubeConfig for this server (skipTLSVerify, token user, context namespace). A new one per call. */
  kubeConfig(): KubeConfig;
  /**
   * A KubeConfig whose token is never subject to `rbac` (user `fake-kube-admin`), for test set-up through HTTP.
   * With `token: null` there is no admin: every request is then the `rbac` user's.
   */
  adminKubeConfig(): KubeConfig;
  /** Ends every watch and connection and stops listening. */
  close(): Promise<void>;

  /** Registers another kind. */
  register(definition: ResourceDefinition): ResourceType;
  /** The resourceVersion of the last write (what a list would report now). */
  resourceVersion(): string;

  // Direct access, bypassing HTTP (no auth, no injected failures, not recorded), with the same rules and events.
  // `resource` is a plural, Kind, `plural.group` or short name: 'channels', 'Channel', 'secrets', 'Lease'.
  /** Creates the object; the namespace comes from metadata.namespace (default `default`). */
  create(resource: string, object: KubeObject): KubeObject;
  /** Replaces the object (main resource: status is kept for kinds with a status subresource). resourceVersion optional; checked when given. */
  update(resource: string, object: KubeObject): KubeObject;
  /** Replaces only .status (kinds with a status subresource). */
  updateStatus(resource: string, object: KubeObject): KubeObject;
  /** Patches the object (`merge` by default); `subresource: 'status'` patches .status only. */
  patch(
    resource: string,
    namespace: string,
    name: string,
    patch: unknown,
    options?: { type?: PatchType; subresource?: 'status'; fieldManager?: string },
  ): KubeObject;
  /** Deletes as the API does: with finalizers the object stays, with deletionTimestamp set (`deleted: false`). */
  delete(resource: string, namespace: string, name: string): { object: KubeObject; deleted: boolean };
  get(resource: string, namespace: string, name: string): KubeObject | undefined;
  /** Every stored object of a kind (in one namespace, or all), sorted by namespace and name. */
  objects(resource: string, namespace?: string): KubeObject[];
  /** Calls `listener` on every stored change, synchronously; returns the unsubscribe function. */
  onChange(listener: (event: StoreEvent) => void): () => void;

  // Watch controls.
  /** Ends every open watch: abruptly (socket destroyed mid-stream, the default) or `graceful` (the chunked stream ends, as a server-side watch timeout). Returns how many. */
  dropWatches(options?: { graceful?: boolean }): number;
  /** Forgets the event history (an etcd compaction): resuming a watch from any earlier resourceVersion gets 410 Expired. */
  compactHistory(): void;
  /** Sends a BOOKMARK to every watch opened with allowWatchBookmarks=true. */
  bookmark(): void;
  openWatches(resource?: string): number;
  /** Resolves once at least `count` watches (on `resource`, or any) are open. */
  waitForWatches(count?: number, resource?: string, timeoutMs?: number): Promise<void>;

  // Chaos.
  /** The next `count` requests matching `match` (all when absent) are answered with this status instead (before any effect). */
  failNext(count: number, status?: number | InjectedFailure, match?: RequestMatch): void;
  clearFailures(): void;

  // Request log.
  /** Every HTTP request received, in order (live array). */
  readonly requests: readonly RecordedRequest[];
  requestCount(match?: RequestMatch): number;
  /**
   * The distinct API calls received (verb, group, `plural[/subresource]`, namespace), in first-seen order,
   * whatever their answer (403s included); `user` narrows them to one caller (e.g. the RBAC policy's user).
   */
  apiCalls(match?: RequestMatch & { user?: string }): ApiCall[];
  resetRequests(): void;
}

const ADMIN_TOKEN = 'fake-kube-admin-token';

/** Starts a fake Kubernetes API server on loopback; see README.md for what it keeps faithful. */
export async function startFakeKube(options: FakeKubeOptions = {}): Promise<FakeKube> {
  const crdKinds =
    options.schemas === false ? TOLLGATE_RESOURCES.map(({ schema: _schema, ...kind }) => kind) : TOLLGATE_RESOURCES;
  const registry = new ResourceRegistry(
    [...BUILT_IN_RESOURCES, ...crdKinds, ...(options.resources ?? [])],
    options.autoRegister ?? true,
  );
  const storeOptions: ConstructorParameters<typeof Store>[1] = {
    historyLimit: options.historyLimit ?? 1000,
    strategicMergeOnCustomResources: options.strategicMergeOnCustomResources ?? 'reject',
  };
  if (options.validate) storeOptions.validate = options.validate;
  const store = new Store(registry, storeOptions);
  const watches = new WatchHub(store, options.bookmarkIntervalMs ?? 0);
  const token = options.token === null ? null : (options.token ?? 'fake-kube-token');
  const auth: ConstructorParameters<typeof FakeKubeServer>[3] = {};
  if (token !== null) Object.assign(auth, { token, adminToken: ADMIN_TOKEN });
  if (options.rbac) auth.rbac = options.rbac;
  const api = new FakeKubeServer(store, registry, watches, auth);
  const server = createServer(api.handle);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  const namespace = options.namespace ?? 'default';

  const nsOf = (object: KubeObject) => object.metadata?.namespace ?? namespace;
  const nameOf = (object: KubeObject) => {
    if (!object.metadata?.name) throw new Error('fake-kube: metadata.name is required');
    return object.metadata.name;
  };
  let closed: Promise<void> | undefined;
  const kubeConfigWith = (userToken: string | null) => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'fake-kube', server: url, skipTLSVerify: true }],
      users: [userToken === null ? { name: 'fake-kube-user' } : { name: 'fake-kube-user', token: userToken }],
      contexts: [{ name: 'fake-kube', cluster: 'fake-kube', user: 'fake-kube-user', namespace }],
      currentContext: 'fake-kube',
    });
    return kc;
  };

  return {
    url,
    token,
    kubeConfig: () => kubeConfigWith(token),
    adminKubeConfig: () => kubeConfigWith(token === null ? null : ADMIN_TOKEN),
    close() {
      closed ??= new Promise<void>((resolve) => {
        watches.stop();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
    register: (definition) => registry.register(definition),
    resourceVersion: () => String(store.revision),
    create: (resource, object) => store.create(registry.resolve(resource), nsOf(object), object),
    update: (resource, object) =>
      store.update(registry.resolve(resource), nsOf(object), nameOf(object), object, { allowUnconditional: true }),
    updateStatus: (resource, object) =>
      store.update(registry.resolve(resource), nsOf(object), nameOf(object), object, {
        allowUnconditional: true,
        subresource: 'status',
      }),
    patch(resource, ns, name, patch, patchOptions = {}) {
      const type = patchOptions.type ?? 'merge';
      const opts: Parameters<Store['patch']>[5] = { fieldManager: patchOptions.fieldManager ?? 'fake-kube-test' };
      if (patchOptions.subresource) opts.subresource = patchOptions.subresource;
      return store.patch(registry.resolve(resource), ns, name, PATCH_TYPES[type], JSON.stringify(patch), opts).object;
    },
    delete: (resource, ns, name) => store.delete(registry.resolve(resource), ns, name),
    get: (resource, ns, name) => store.find(registry.resolve(resource), ns, name),
    objects: (resource, ns) => structuredClone(store.all(registry.resolve(resource), ns)),
    onChange: (listener) => store.subscribe(listener),
    dropWatches: (dropOptions = {}) => watches.drop(dropOptions.graceful ?? false),
    compactHistory: () => store.compact(),
    bookmark: () => watches.bookmark(),
    openWatches: (resource) => watches.count(resource === undefined ? undefined : registry.resolve(resource)),
    waitForWatches: (count = 1, resource, timeoutMs = 5000) =>
      watches.waitFor(count, resource === undefined ? undefined : registry.resolve(resource), timeoutMs),
    failNext(count, status = 500, match) {
      api.failNext(count, typeof status === 'number' ? { code: status } : status, match);
    },
    clearFailures: () => api.clearFailures(),
    requests: api.requests,
    requestCount: (match) => api.requests.filter((r) => api.matches(r, match)).length,
    apiCalls: (match) => api.apiCalls(match),
    resetRequests: () => {
      api.requests.length = 0;
    },
  };
}
