import type { IncomingMessage, ServerResponse } from 'node:http';
import { authorize, checkOwnerReferences, type RbacPolicy, type RequestAttributes } from './authorize.ts';
import { errors, KubeApiError, REASONS, statusObject } from './errors.ts';
import type { ResourceRegistry, ResourceType } from './resources.ts';
import type { FieldValidation } from './schema.ts';
import { type Matcher, parseFieldSelector, parseLabelSelector } from './selectors.ts';
import type { KubeObject, Store, WriteOptions } from './store.ts';
import type { WatchHub } from './watch.ts';

/**
 * HTTP routing onto the store: `/api/v1/…` and `/apis/{group}/{version}/…`, namespaced and cluster-wide
 * collections, single objects, the `/status` subresource, watches, discovery, bearer-token auth, request
 * recording, RBAC and injected failures.
 */

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

export interface RecordedRequest {
  method: string;
  /** Path without the query. */
  path: string;
  query: Record<string, string>;
  verb?: Verb;
  /** Plural of the resource, e.g. `channels`. */
  resource?: string;
  group?: string;
  namespace?: string;
  name?: string;
  subresource?: string;
  contentType?: string;
  /** Who sent it: the RBAC policy's user, `fake-kube-admin`, or `fake-kube-user` when RBAC is off. */
  user?: string;
  /** Warnings answered in `Warning` headers (unknown fields the schema pruned). */
  warnings?: string[];
  /** The HTTP status answered (200 for a watch that was opened). */
  status?: number;
}

/** Selects requests for `failNext` and `requestCount`; every given field must match. */
export interface RequestMatch {
  verb?: Verb | Verb[];
  /** Plural, Kind or `plural.group`, case-insensitive. */
  resource?: string;
  namespace?: string;
  name?: string;
  subresource?: string;
}

export interface InjectedFailure {
  code: number;
  reason?: string;
  message?: string;
}

/** One distinct API call as RBAC sees it: `resource` is `plural` or `plural/subresource`. */
export interface ApiCall {
  verb: Verb;
  group: string;
  resource: string;
  /** Absent at the cluster scope. */
  namespace?: string;
}

/**
 * Who may call: the token (bound to `rbac` when given) and an admin token that may do anything. Without a
 * token (auth off) every request is the `rbac` user's.
 */
export interface ServerAuth {
  token?: string;
  adminToken?: string;
  rbac?: RbacPolicy;
}

export const ADMIN_USER = 'fake-kube-admin';
const DEFAULT_USER = 'fake-kube-user';
const FIELD_VALIDATIONS = new Set<string>(['Ignore', 'Warn', 'Strict']);

interface Route {
  type: ResourceType;
  namespace?: string;
  name?: string;
  subresource?: 'status';
  watchPrefix: boolean;
}

const BODY_LIMIT = 3 * 1024 * 1024;

export class FakeKubeServer {
  readonly requests: RecordedRequest[] = [];
  private failures: Array<{ remaining: number; failure: InjectedFailure; match?: RequestMatch }> = [];

  private readonly store: Store;
  private readonly registry: ResourceRegistry;
  private readonly watches: WatchHub;
  private readonly auth: ServerAuth;

  constructor(store: Store, registry: ResourceRegistry, watches: WatchHub, auth: ServerAuth) {
    this.store = store;
    this.registry = registry;
    this.watches = watches;
    this.auth = auth;
  }

  /** Each distinct (verb, group, resource[/subresource], namespace) received, in first-seen order. */
  apiCalls(match?: RequestMatch & { user?: string }): ApiCall[] {
    const seen = new Map<string, ApiCall>();
    for (const r of this.requests) {
      if (!r.verb || r.resource === undefined || !this.matches(r, match)) continue;
      if (match?.user !== undefined && r.user !== match.user) continue;
      const call: ApiCall = {
        verb: r.verb,
        group: r.group ?? '',
        resource: r.subresource ? `${r.resource}/${r.subresource}` : r.resource,
      };
      if (r.namespace !== undefined) call.namespace = r.namespace;
      seen.set(JSON.stringify(call), call);
    }
    return [...seen.values()];
  }

  failNext(count: number, failure: InjectedFailure, match?: RequestMatch) {
    const entry: (typeof this.failures)[number] = { remaining: count, failure };
    if (match) entry.match = match;
    this.failures.push(entry);
  }

  clearFailures() {
    this.failures = [];
  }

  matches(request: RecordedRequest, match: RequestMatch | undefined): boolean {
    if (!match) return true;
    if (match.verb !== undefined) {
      const verbs = Array.isArray(match.verb) ? match.verb : [match.verb];
      if (!request.verb || !verbs.includes(request.verb)) return false;
    }
    if (match.resource !== undefined) {
      if (!request.resource) return false;
      const wanted = match.resource.toLowerCase();
      const type = this.registry.all().find((t) => t.plural === request.resource && t.group === request.group);
      const names = [request.resource, type?.kind.toLowerCase(), type?.groupResource, type?.singular];
      if (!names.includes(wanted)) return false;
    }
    if (match.namespace !== undefined && request.namespace !== match.namespace) return false;
    if (match.name !== undefined && request.name !== match.name) return false;
    if (match.subresource !== undefined && request.subresource !== match.subresource) return false;
    return true;
  }

  handle = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? '/', 'http://fake-kube');
    const record: RecordedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
    };
    const contentType = req.headers['content-type'];
    if (contentType) record.contentType = contentType;
    this.requests.push(record);
    res.on('finish', () => {
      record.status ??= res.statusCode;
    });
    this.dispatch(req, res, url, record).catch((error: unknown) => {
      const apiError =
        error instanceof KubeApiError
          ? error
          : new KubeApiError(500, `fake-kube: ${(error as Error)?.stack ?? String(error)}`, 'InternalError');
      if (res.headersSent) {
        res.destroy();
        return;
      }
      record.status = apiError.code;
      send(res, apiError.code, apiError.toStatus());
    });
  };

  private async dispatch(req: IncomingMessage, res: ServerResponse, url: URL, record: RecordedRequest) {
    const segments = url.pathname
      .split('/')
      .filter((s) => s !== '')
      .map((s) => decodeURIComponent(s));
    const [root] = segments;
    if (['healthz', 'readyz', 'livez'].includes(root ?? '')) {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
      return;
    }
    const policy = this.authenticate(req, record);
    if (req.method === 'GET' && this.discovery(res, segments, req)) return;
    if (root !== 'api' && root !== 'apis') throw errors.noSuchPath();

    const route = this.route(segments);
    const { type, namespace, name, subresource } = route;
    record.resource = type.plural;
    record.group = type.group;
    if (namespace !== undefined) record.namespace = namespace;
    if (name !== undefined) record.name = name;
    if (subresource) record.subresource = subresource;
    const q = url.searchParams;
    const watching = route.watchPrefix || q.get('watch') === 'true' || q.get('watch') === '1';
    const verb = this.verb(req.method ?? 'GET', route, watching);
    record.verb = verb;
    if (policy) authorize(policy, this.attributes(verb, route, q));

    const failure = this.takeFailure(record);
    if (failure) {
      const code = failure.code;
      const status = statusObject(
        code,
        failure.message ?? `fake-kube: injected ${code}`,
        failure.reason ?? REASONS[code],
      );
      if (code === 429 || code === 503) res.setHeader('retry-after', '1');
      send(res, code, status);
      return;
    }

    const dryRun = q.getAll('dryRun').includes('All');
    const writes = () => this.writeOptions(q, verb, policy, route, dryRun, record);
    switch (verb) {
      case 'get':
        send(res, 200, this.store.get(type, namespace ?? '', name!));
        return;
      case 'list': {
        const options: Parameters<Store['list']>[2] = { match: this.selector(q, type) };
        const limit = Number(q.get('limit'));
        if (Number.isInteger(limit) && limit > 0) options.limit = limit;
        const token = q.get('continue');
        if (token) options.continue = token;
        const result = this.store.list(type, namespace, options);
        const metadata: Record<string, unknown> = { resourceVersion: result.resourceVersion };
        if (result.continue) metadata.continue = result.continue;
        if (result.remainingItemCount !== undefined) metadata.remainingItemCount = result.remainingItemCount;
        // kube-apiserver omits kind/apiVersion on the items of built-in lists and keeps them on custom resources.
        const items = type.custom
          ? result.items
          : result.items.map(({ apiVersion: _a, kind: _k, ...rest }) => rest as KubeObject);
        send(res, 200, { apiVersion: type.apiVersion, kind: type.listKind, metadata, items });
        return;
      }
      case 'watch': {
        let match = this.selector(q, type);
        if (name !== undefined) {
          const byName = parseFieldSelector(`metadata.name=${name}`, type.kind);
          const rest = match;
          match = (o) => byName(o) && rest(o);
        }
        const timeout = Number(q.get('timeoutSeconds'));
        const spec: Parameters<WatchHub['serve']>[1] = {
          type,
          match,
          allowBookmarks: q.get('allowWatchBookmarks') === 'true',
        };
        if (namespace !== undefined) spec.namespace = namespace;
        const rv = q.get('resourceVersion');
        if (rv !== null) spec.resourceVersion = rv;
        if (Number.isFinite(timeout) && timeout > 0) spec.timeoutSeconds = timeout;
        this.watches.serve(res, spec);
        record.status = 200;
        return;
      }
      case 'create': {
        const body = await readJson(req);
        const writeOptions = writes();
        const created = this.store.create(type, namespace, body, writeOptions);
        send(res, 201, created, writeOptions.warnings);
        return;
      }
      case 'update': {
        const body = await readJson(req);
        const writeOptions = writes();
        const options: WriteOptions = subresource ? { ...writeOptions, subresource } : writeOptions;
        send(res, 200, this.store.update(type, namespace ?? '', name!, body, options), writeOptions.warnings);
        return;
      }
      case 'patch': {
        const raw = (await readBody(req)).toString('utf8');
        const writeOptions = writes();
        const options: Parameters<Store['patch']>[5] = { ...writeOptions, force: q.get('force') === 'true' };
        const fieldManager = q.get('fieldManager');
        if (fieldManager) options.fieldManager = fieldManager;
        if (subresource) options.subresource = subresource;
        const result = this.store.patch(type, namespace ?? '', name!, contentType(req), raw, options);
        send(res, result.created ? 201 : 200, result.object, writeOptions.warnings);
        return;
      }
      case 'delete': {
        const body = await readJson(req, true);
        const deleteOptions: Parameters<Store['delete']>[3] = { dryRun };
        const preconditions = (body as { preconditions?: { uid?: string; resourceVersion?: string } })?.preconditions;
        if (preconditions) deleteOptions.preconditions = preconditions;
        const result = this.store.delete(type, namespace ?? '', name!, deleteOptions);
        send(res, 200, result.deleted ? deletedStatus(type, result.object) : result.object);
        return;
      }
      case 'deletecollection': {
        const match = this.selector(q, type);
        for (const object of this.store.all(type, namespace, match)) {
          this.store.delete(type, object.metadata.namespace ?? '', object.metadata.name!, { dryRun });
        }
        const remaining = this.store.list(type, namespace, { match });
        send(res, 200, {
          apiVersion: type.apiVersion,
          kind: type.listKind,
          metadata: { resourceVersion: remaining.resourceVersion },
          items: remaining.items,
        });
        return;
      }
    }
  }

  /** The RBAC policy that applies to the request (none: allowed everything); 401 for a wrong token. */
  private authenticate(req: IncomingMessage, record: RecordedRequest): RbacPolicy | undefined {
    const { token, adminToken, rbac } = this.auth;
    const header = req.headers.authorization;
    if (token === undefined || header === `Bearer ${token}`) {
      record.user = rbac?.user ?? DEFAULT_USER;
      return rbac;
    }
    if (adminToken !== undefined && header === `Bearer ${adminToken}`) {
      record.user = ADMIN_USER;
      return undefined;
    }
    throw new KubeApiError(401, 'Unauthorized', 'Unauthorized');
  }

  /** A list or watch narrowed to one name by `fieldSelector=metadata.name=x` is authorized for that name. */
  private attributes(verb: Verb, route: Route, q: URLSearchParams): RequestAttributes {
    const attributes: RequestAttributes = { verb, group: route.type.group, resource: route.type.plural };
    if (route.subresource) attributes.subresource = route.subresource;
    if (route.namespace) attributes.namespace = route.namespace;
    const byField = /^metadata\.name==?([^,]+)$/.exec(q.get('fieldSelector') ?? '')?.[1];
    const name = route.name ?? (verb === 'list' || verb === 'watch' ? byField : undefined);
    if (name !== undefined) attributes.name = name;
    return attributes;
  }

  /** Options of a create, update or patch; the warnings it collects are recorded with the request. */
  private writeOptions(
    q: URLSearchParams,
    verb: Verb,
    policy: RbacPolicy | undefined,
    route: Route,
    dryRun: boolean,
    record: RecordedRequest,
  ) {
    const fieldValidation = q.get('fieldValidation') || 'Warn';
    if (!FIELD_VALIDATIONS.has(fieldValidation)) {
      const options = verb === 'create' ? 'CreateOptions' : verb === 'patch' ? 'PatchOptions' : 'UpdateOptions';
      throw new KubeApiError(
        422,
        `${options}.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "${fieldValidation}": supported values: "Ignore", "Strict", "Warn"`,
        'Invalid',
      );
    }
    const options: WriteOptions & { warnings: string[] } = {
      dryRun,
      fieldValidation: fieldValidation as FieldValidation,
      warnings: [],
    };
    record.warnings = options.warnings;
    if (policy?.ownerReferencesPermissionEnforcement) {
      options.admit = (previous, next) =>
        checkOwnerReferences(policy, this.registry, route.type, route.namespace, previous, next);
    }
    return options;
  }

  private route(segments: string[]): Route {
    let group: string;
    let version: string | undefined;
    let rest: string[];
    if (segments[0] === 'api') {
      group = '';
      version = segments[1];
      rest = segments.slice(2);
    } else {
      group = segments[1] ?? '';
      version = segments[2];
      rest = segments.slice(3);
    }
    let watchPrefix = false;
    if (rest[0] === 'watch') {
      watchPrefix = true;
      rest = rest.slice(1);
    }
    let namespace: string | undefined;
    if (rest[0] === 'namespaces' && rest.length >= 3) {
      namespace = rest[1];
      rest = rest.slice(2);
    }
    const [plural, name, subresource, ...extra] = rest;
    if (!version || !plural || extra.length > 0) throw errors.noSuchPath();
    const type = this.registry.byPath(group, version, plural);
    if (!type) throw errors.noSuchPath();
    if (namespace !== undefined && !type.namespaced) throw errors.noSuchPath();
    if (namespace === undefined && type.namespaced && name !== undefined) throw errors.noSuchPath();
    if (subresource !== undefined && (subresource !== 'status' || !type.statusSubresource)) throw errors.noSuchPath();
    const route: Route = { type, watchPrefix };
    if (namespace !== undefined) route.namespace = namespace;
    if (name !== undefined) route.name = name;
    if (subresource === 'status') route.subresource = 'status';
    return route;
  }

  private verb(method: string, route: Route, watching: boolean): Verb {
    const one = route.name !== undefined;
    switch (method) {
      case 'GET':
        if (watching) return 'watch';
        return one ? 'get' : 'list';
      case 'POST':
        if (one || route.watchPrefix || (route.type.namespaced && route.namespace === undefined)) {
          throw errors.methodNotAllowed();
        }
        return 'create';
      case 'PUT':
        if (!one) throw errors.methodNotAllowed();
        return 'update';
      case 'PATCH':
        if (!one) throw errors.methodNotAllowed();
        return 'patch';
      case 'DELETE':
        if (route.subresource) throw errors.methodNotAllowed();
        return one ? 'delete' : 'deletecollection';
      default:
        throw errors.methodNotAllowed();
    }
  }

  private selector(q: URLSearchParams, type: ResourceType): Matcher {
    const labels = parseLabelSelector(q.get('labelSelector'));
    const fields = parseFieldSelector(q.get('fieldSelector'), type.kind);
    return (object) => labels(object) && fields(object);
  }

  private takeFailure(record: RecordedRequest): InjectedFailure | undefined {
    const entry = this.failures.find((f) => f.remaining > 0 && this.matches(record, f.match));
    if (!entry) return undefined;
    entry.remaining -= 1;
    this.failures = this.failures.filter((f) => f.remaining > 0);
    return entry.failure;
  }

  /** The discovery documents KubernetesObjectApi (and kubectl) read; true when the path was one of them. */
  private discovery(res: ServerResponse, segments: string[], req: IncomingMessage): boolean {
    const [root, a, b] = segments;
    if (root === 'version' && segments.length === 1) {
      send(res, 200, { major: '1', minor: '35', gitVersion: 'v1.35.0-fake-kube', platform: 'linux/amd64' });
      return true;
    }
    if (root === 'api' && segments.length === 1) {
      const address = `${req.socket.localAddress}:${req.socket.localPort}`;
      send(res, 200, {
        kind: 'APIVersions',
        versions: ['v1'],
        serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: address }],
      });
      return true;
    }
    const groups = new Map<string, string[]>();
    for (const gv of this.registry.groupVersions()) {
      if (gv.group) groups.set(gv.group, [...(groups.get(gv.group) ?? []), gv.version]);
    }
    const groupDoc = (name: string, versions: string[]) => ({
      name,
      versions: versions.map((version) => ({ groupVersion: `${name}/${version}`, version })),
      preferredVersion: { groupVersion: `${name}/${versions[0]}`, version: versions[0] },
    });
    if (root === 'apis' && segments.length === 1) {
      send(res, 200, {
        kind: 'APIGroupList',
        apiVersion: 'v1',
        groups: [...groups].map(([name, versions]) => groupDoc(name, versions)),
      });
      return true;
    }
    if (root === 'apis' && segments.length === 2 && groups.has(a!)) {
      send(res, 200, { kind: 'APIGroup', apiVersion: 'v1', ...groupDoc(a!, groups.get(a!)!) });
      return true;
    }
    const resourceList = (group: string, version: string) => {
      const types = this.registry.all().filter((t) => t.group === group && t.version === version);
      if (types.length === 0) return false;
      const resources = types.flatMap((t) => {
        const main = {
          name: t.plural,
          singularName: t.singular,
          namespaced: t.namespaced,
          kind: t.kind,
          verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
          ...(t.shortNames.length > 0 ? { shortNames: t.shortNames } : {}),
        };
        if (!t.statusSubresource) return [main];
        return [
          main,
          {
            name: `${t.plural}/status`,
            singularName: '',
            namespaced: t.namespaced,
            kind: t.kind,
            verbs: ['get', 'patch', 'update'],
          },
        ];
      });
      send(res, 200, {
        kind: 'APIResourceList',
        apiVersion: 'v1',
        groupVersion: group ? `${group}/${version}` : version,
        resources,
      });
      return true;
    };
    if (root === 'api' && segments.length === 2) return resourceList('', a!);
    if (root === 'apis' && segments.length === 3) return resourceList(a!, b!);
    return false;
  }
}

function send(res: ServerResponse, code: number, body: unknown, warnings: string[] = []) {
  const text = JSON.stringify(body);
  // The Warning header as kube-apiserver writes it (RFC 7234 code 299, agent "-").
  if (warnings.length > 0)
    res.setHeader(
      'warning',
      warnings.map((w) => `299 - ${JSON.stringify(w)}`),
    );
  res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function deletedStatus(type: ResourceType, object: KubeObject) {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Success',
    details: { name: object.metadata.name, group: type.group, kind: type.plural, uid: object.metadata.uid },
  };
}

function contentType(req: IncomingMessage): string {
  return req.headers['content-type'] ?? 'application/json';
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > BODY_LIMIT) throw new KubeApiError(413, 'the request body is too large', 'RequestEntityTooLarge');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

async function readJson(req: IncomingMessage, optional = false): Promise<unknown> {
  const raw = (await readBody(req)).toString('utf8');
  if (raw.trim() === '') {
    if (optional) return undefined;
    throw errors.badRequest('the request body is empty');
  }
  try {
    return JSON.parse(raw);
  } catch (error) {
    throw errors.badRequest(`the request body is not valid JSON: ${(error as Error).message}`);
  }
}
