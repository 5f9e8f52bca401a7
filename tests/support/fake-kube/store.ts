import { randomUUID } from 'node:crypto';
import { parse as parseYaml } from 'yaml';
import { errors, KubeApiError } from './errors.ts';
import { eventProblems } from './events.ts';
import { deepEqual, isPlainObject, jsonPatch, mergePatch, PatchError } from './patch.ts';
import type { ResourceRegistry, ResourceType } from './resources.ts';
import { decodeCustomResource, type FieldValidation, schemaProblems } from './schema.ts';
import type { Matcher } from './selectors.ts';

/**
 * The fake's etcd and registry strategies in one: objects by resource type, namespace and name, one global
 * resourceVersion counter, a window of recent events for watches, and the Kubernetes rules for each verb
 * (generation, status subresource, finalizers, optimistic concurrency, patch formats).
 */

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: Array<Record<string, unknown>>;
  [key: string]: unknown;
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [key: string]: any;
}

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One change, as a watch reports it. `previous` is the object before the change (absent for ADDED). */
export interface StoreEvent {
  resourceVersion: number;
  type: EventType;
  resource: ResourceType;
  object: KubeObject;
  previous?: KubeObject;
}

/** A validation hook: the messages it returns (e.g. `spec.models: Required value`) make the write a 422 Invalid. */
export type Validator = (kind: string, object: KubeObject) => string[] | undefined | null;

export interface StoreOptions {
  validate?: Validator;
  /** Events kept for watches that resume from a resourceVersion. */
  historyLimit: number;
  /** `reject`: 415 for strategic merge patch on custom resources, as kube-apiserver does; `merge`: apply it as a merge patch. */
  strategicMergeOnCustomResources: 'reject' | 'merge';
}

export interface WriteOptions {
  dryRun?: boolean;
  /** `status` writes only `.status` (types with a status subresource). */
  subresource?: 'status';
  /** Allow a PUT without metadata.resourceVersion on a custom resource (kube-apiserver refuses it; the test helpers allow it). */
  allowUnconditional?: boolean;
  /** Unknown fields of a custom resource: dropped silently, dropped with a warning (default), or a 400. */
  fieldValidation?: FieldValidation;
  /** Collects the warnings of the write (`unknown field "spec.x"`), for the `Warning` response headers. */
  warnings?: string[];
  /** Validating admission: runs on the final object (after schema validation) and throws to refuse the write. */
  admit?: (previous: KubeObject | undefined, next: KubeObject) => void;
}

export interface PatchOptions extends WriteOptions {
  fieldManager?: string;
  force?: boolean;
}

export interface DeleteOptions {
  dryRun?: boolean;
  preconditions?: { uid?: string; resourceVersion?: string };
}

export interface ListOptions {
  match?: Matcher;
  limit?: number;
  continue?: string;
}

export interface ListResult {
  items: KubeObject[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

export const PATCH_TYPES = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
} as const;

const NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
const GENERATE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** RFC 3339 with whole seconds, as metav1.Time serializes. */
export function timestamp(date = new Date()): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function clone<T>(value: T): T {
  return structuredClone(value);
}

export class Store {
  /** The last resourceVersion handed out (etcd's revision). */
  revision = 0;
  private readonly objects = new Map<ResourceType, Map<string, KubeObject>>();
  private history: StoreEvent[] = [];
  /** Every event with a resourceVersion above this one is still in `history`. */
  private historyStart = 0;
  private readonly listeners = new Set<(event: StoreEvent) => void>();

  readonly registry: ResourceRegistry;
  private readonly options: StoreOptions;

  constructor(registry: ResourceRegistry, options: StoreOptions) {
    this.registry = registry;
    this.options = options;
  }

  // ---- reads ----------------------------------------------------------------------------------------------

  get(type: ResourceType, namespace: string, name: string): KubeObject {
    return clone(this.mustGet(type, namespace, name));
  }

  find(type: ResourceType, namespace: string, name: string): KubeObject | undefined {
    const found = this.bucket(type).get(this.key(type, namespace, name));
    return found && clone(found);
  }

  /** Objects of a type, in one namespace or all, sorted by namespace then name (as etcd keys sort). */
  all(type: ResourceType, namespace?: string, match?: Matcher): KubeObject[] {
    const keys = [...this.bucket(type).keys()].sort();
    const out: KubeObject[] = [];
    for (const key of keys) {
      const object = this.bucket(type).get(key)!;
      if (namespace !== undefined && type.namespaced && object.metadata.namespace !== namespace) continue;
      if (match && !match(object)) continue;
      out.push(object);
    }
    return out;
  }

  list(type: ResourceType, namespace: string | undefined, options: ListOptions = {}): ListResult {
    let items = this.all(type, namespace, options.match);
    let start = 0;
    if (options.continue) {
      const token = decodeContinue(options.continue);
      if (token.rv < this.historyStart) {
        throw errors.expired(
          'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
        );
      }
      start = items.findIndex((o) => this.key(type, o.metadata.namespace ?? '', o.metadata.name!) > token.after);
      if (start < 0) start = items.length;
    }
    items = items.slice(start);
    const result: ListResult = { items: [], resourceVersion: String(this.revision) };
    if (options.limit && options.limit > 0 && items.length > options.limit) {
      const page = items.slice(0, options.limit);
      const last = page[page.length - 1]!;
      result.continue = encodeContinue(
        this.revision,
        this.key(type, last.metadata.namespace ?? '', last.metadata.name!),
      );
      result.remainingItemCount = items.length - page.length;
      items = page;
    }
    result.items = items.map(clone);
    return result;
  }

  // ---- writes ---------------------------------------------------------------------------------------------

  create(type: ResourceType, namespace: string | undefined, body: unknown, options: WriteOptions = {}): KubeObject {
    const input = this.decode(type, this.checkBody(type, body), options);
    this.registry.adoptKind(type, input.kind);
    const meta = input.metadata;
    const ns = this.namespaceFor(type, namespace, meta.namespace);
    let name = meta.name;
    if (!name && meta.generateName) {
      do {
        name = meta.generateName + randomSuffix();
      } while (this.bucket(type).has(this.key(type, ns, name)));
    }
    if (!name) throw errors.invalid(type, '', ['metadata.name: Required value: name or generateName is required']);
    this.checkName(type, name);
    if (this.bucket(type).has(this.key(type, ns, name))) throw errors.alreadyExists(type, name);

    const metadata: ObjectMeta = { name };
    if (meta.generateName) metadata.generateName = meta.generateName;
    if (type.namespaced) metadata.namespace = ns;
    metadata.uid = randomUUID();
    metadata.resourceVersion = '';
    if (type.generation) metadata.generation = 1;
    metadata.creationTimestamp = timestamp();
    copyUserMetadata(metadata, meta);
    const object = this.assemble(type, input, metadata);
    if (type.statusSubresource) delete object.status;
    this.normalize(type, object);
    this.validate(type, object);
    options.admit?.(undefined, clone(object));
    if (options.dryRun) return clone(object);
    this.commit(type, 'ADDED', object, undefined);
    return clone(object);
  }

  update(type: ResourceType, namespace: string, name: string, body: unknown, options: WriteOptions = {}): KubeObject {
    const current = this.mustGet(type, namespace, name);
    const input = this.decode(type, this.checkBody(type, body), options);
    if (input.metadata.name !== undefined && input.metadata.name !== name) {
      throw errors.badRequest(
        `the name of the object (${input.metadata.name}) does not match the name on the URL (${name})`,
      );
    }
    this.namespaceFor(type, namespace, input.metadata.namespace);
    const wanted = input.metadata.resourceVersion;
    if (wanted !== undefined && wanted !== '') {
      if (wanted !== current.metadata.resourceVersion) throw errors.staleResourceVersion(type, name);
    } else if (type.custom && !options.allowUnconditional) {
      throw errors.invalid(
        type,
        name,
        ['metadata.resourceVersion: Invalid value: 0x0: must be specified for an update'],
        'resource',
      );
    }

    let next: KubeObject;
    if (options.subresource === 'status') {
      if (!type.statusSubresource) throw errors.noSuchPath();
      next = clone(current);
      if ('status' in input) next.status = clone(input.status);
      else delete next.status;
    } else {
      const metadata: ObjectMeta = {};
      for (const key of ['name', 'generateName', 'namespace', 'uid', 'resourceVersion', 'generation'] as const) {
        if (current.metadata[key] !== undefined) metadata[key] = current.metadata[key] as never;
      }
      metadata.creationTimestamp = current.metadata.creationTimestamp;
      if (current.metadata.deletionTimestamp) {
        metadata.deletionTimestamp = current.metadata.deletionTimestamp;
        metadata.deletionGracePeriodSeconds = current.metadata.deletionGracePeriodSeconds;
      }
      copyUserMetadata(metadata, input.metadata);
      next = this.assemble(type, input, metadata);
      if (type.statusSubresource) {
        if ('status' in current) next.status = clone(current.status);
        else delete next.status;
      }
      this.normalize(type, next);
      this.checkImmutable(type, current, next);
    }

    if (current.metadata.deletionTimestamp) {
      const before = new Set(current.metadata.finalizers ?? []);
      const added = (next.metadata.finalizers ?? []).filter((f) => !before.has(f));
      if (added.length > 0) {
        throw errors.invalid(type, name, [
          `metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{${added.map((f) => JSON.stringify(f)).join(', ')}}`,
        ]);
      }
    }
    if (type.generation && !deepEqual(this.generationView(type, current), this.generationView(type, next))) {
      next.metadata.generation = (current.metadata.generation ?? 0) + 1;
    }
    this.validate(type, next);
    options.admit?.(clone(current), clone(next));
    if (deepEqual(next, current)) return clone(current);
    if (options.dryRun) return clone(next);
    if (current.metadata.deletionTimestamp && (next.metadata.finalizers ?? []).length === 0) {
      this.commit(type, 'DELETED', next, current);
    } else {
      this.commit(type, 'MODIFIED', next, current);
    }
    return clone(next);
  }

  /**
   * PATCH: computes the patched object, then writes it as an update. A resourceVersion the patch sets is a
   * precondition (409 when stale). Server-side apply creates a missing object.
   */
  patch(
    type: ResourceType,
    namespace: string,
    name: string,
    contentType: string,
    raw: string,
    options: PatchOptions = {},
  ): { object: KubeObject; created: boolean } {
    const mediaType = contentType.split(';')[0]!.trim().toLowerCase();
    const accepted = type.custom
      ? [PATCH_TYPES.json, PATCH_TYPES.merge, PATCH_TYPES.apply]
      : [PATCH_TYPES.json, PATCH_TYPES.merge, PATCH_TYPES.strategic, PATCH_TYPES.apply];
    if (
      !accepted.includes(mediaType as never) &&
      !(mediaType === PATCH_TYPES.strategic && this.options.strategicMergeOnCustomResources === 'merge')
    ) {
      throw errors.unsupportedMediaType(accepted);
    }

    if (mediaType === PATCH_TYPES.apply) {
      let applied: unknown;
      try {
        applied = parseYaml(raw);
      } catch (error) {
        throw errors.badRequest(`error decoding YAML: ${(error as Error).message}`);
      }
      if (!options.fieldManager) {
        throw new KubeApiError(
          422,
          'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
          'Invalid',
        );
      }
      if (!isPlainObject(applied) || !applied.apiVersion || !applied.kind) {
        throw errors.badRequest('invalid object type: apply configurations must set apiVersion and kind');
      }
      const meta = isPlainObject(applied.metadata) ? applied.metadata : {};
      if (meta.name !== undefined && meta.name !== name) {
        throw errors.badRequest(`the name of the object (${meta.name}) does not match the name on the URL (${name})`);
      }
      const current = this.bucket(type).get(this.key(type, namespace, name));
      if (!current) {
        if (options.subresource) throw errors.notFound(type, name);
        const object = this.create(type, namespace, { ...applied, metadata: { ...meta, name } }, options);
        return { object, created: true };
      }
      return {
        object: this.writePatched(type, namespace, name, current, mergePatch(current, applied), options),
        created: false,
      };
    }

    const current = this.mustGet(type, namespace, name);
    let document: unknown;
    try {
      document = JSON.parse(raw);
    } catch (error) {
      throw errors.badRequest(`error decoding patch: ${(error as Error).message}`);
    }
    let patched: unknown;
    if (mediaType === PATCH_TYPES.json) {
      try {
        patched = jsonPatch(current, document);
      } catch (error) {
        if (!(error instanceof PatchError)) throw error;
        if (error.malformed) throw errors.badRequest(error.message);
        throw new KubeApiError(422, error.message, 'Invalid');
      }
    } else {
      if (!isPlainObject(document)) throw errors.badRequest('a merge patch must be a JSON object');
      patched = mergePatch(current, document);
    }
    return { object: this.writePatched(type, namespace, name, current, patched, options), created: false };
  }

  /** DELETE: removes the object, or — while it has finalizers — only sets deletionTimestamp. */
  delete(
    type: ResourceType,
    namespace: string,
    name: string,
    options: DeleteOptions = {},
  ): { object: KubeObject; deleted: boolean } {
    const current = this.mustGet(type, namespace, name);
    const { uid, resourceVersion } = options.preconditions ?? {};
    if (uid && uid !== current.metadata.uid) {
      throw errors.preconditionFailed(
        type,
        name,
        `the UID in the precondition (${uid}) does not match the UID in record (${current.metadata.uid}). The object might have been deleted and then recreated`,
      );
    }
    if (resourceVersion && resourceVersion !== current.metadata.resourceVersion) {
      throw errors.preconditionFailed(
        type,
        name,
        `the ResourceVersion in the precondition (${resourceVersion}) does not match the ResourceVersion in record (${current.metadata.resourceVersion}). The object might have been modified`,
      );
    }
    if ((current.metadata.finalizers ?? []).length > 0) {
      if (current.metadata.deletionTimestamp) return { object: clone(current), deleted: false };
      const next = clone(current);
      next.metadata.deletionTimestamp = timestamp();
      next.metadata.deletionGracePeriodSeconds = 0;
      // kube-apiserver bumps a set generation when it first sets deletionTimestamp.
      if ((next.metadata.generation ?? 0) > 0) next.metadata.generation! += 1;
      if (options.dryRun) return { object: next, deleted: false };
      this.commit(type, 'MODIFIED', next, current);
      return { object: clone(next), deleted: false };
    }
    const final = clone(current);
    if (options.dryRun) return { object: final, deleted: true };
    this.commit(type, 'DELETED', final, current);
    return { object: clone(final), deleted: true };
  }

  // ---- events ---------------------------------------------------------------------------------------------

  subscribe(listener: (event: StoreEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Events after `resourceVersion`, or undefined when the window no longer reaches back that far (410 Expired). */
  eventsSince(resourceVersion: number): StoreEvent[] | undefined {
    if (resourceVersion < this.historyStart) return undefined;
    return this.history.filter((e) => e.resourceVersion > resourceVersion);
  }

  /** The oldest resourceVersion a watch may still resume from. */
  get oldestResumableVersion(): number {
    return this.historyStart;
  }

  /** Forgets every past event, as an etcd compaction does: resuming from any older version is then 410 Gone. */
  compact(): void {
    this.history = [];
    this.historyStart = this.revision;
  }

  // ---- internals ------------------------------------------------------------------------------------------

  private writePatched(
    type: ResourceType,
    namespace: string,
    name: string,
    current: KubeObject,
    patched: unknown,
    options: WriteOptions,
  ): KubeObject {
    if (!isPlainObject(patched)) throw new KubeApiError(422, 'the patched object is not a JSON object', 'Invalid');
    const object = patched as KubeObject;
    if (!isPlainObject(object.metadata)) object.metadata = {};
    if (object.metadata.resourceVersion === undefined || object.metadata.resourceVersion === null) {
      object.metadata.resourceVersion = current.metadata.resourceVersion;
    }
    return this.update(type, namespace, name, object, { ...options, allowUnconditional: true });
  }

  private commit(type: ResourceType, eventType: EventType, object: KubeObject, previous: KubeObject | undefined) {
    this.revision += 1;
    object.metadata.resourceVersion = String(this.revision);
    const key = this.key(type, object.metadata.namespace ?? '', object.metadata.name!);
    if (eventType === 'DELETED') this.bucket(type).delete(key);
    else this.bucket(type).set(key, object);
    const event: StoreEvent = {
      resourceVersion: this.revision,
      type: eventType,
      resource: type,
      object: clone(object),
    };
    if (previous) event.previous = previous;
    this.history.push(event);
    while (this.history.length > this.options.historyLimit) {
      this.historyStart = this.history.shift()!.resourceVersion;
    }
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // A broken watcher must not fail the write.
      }
    }
  }

  private mustGet(type: ResourceType, namespace: string, name: string): KubeObject {
    const found = this.bucket(type).get(this.key(type, namespace, name));
    if (!found) throw errors.notFound(type, name);
    return found;
  }

  private bucket(type: ResourceType): Map<string, KubeObject> {
    let bucket = this.objects.get(type);
    if (!bucket) {
      bucket = new Map();
      this.objects.set(type, bucket);
    }
    return bucket;
  }

  private key(type: ResourceType, namespace: string, name: string): string {
    return type.namespaced ? `${namespace}/${name}` : name;
  }

  private namespaceFor(type: ResourceType, fromPath: string | undefined, fromBody: string | undefined): string {
    if (!type.namespaced) return '';
    if (fromPath && fromBody && fromPath !== fromBody) {
      throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    return fromPath || fromBody || 'default';
  }

  private checkBody(type: ResourceType, body: unknown): KubeObject {
    if (!isPlainObject(body)) throw errors.badRequest('the request body must be a JSON object');
    if (body.metadata !== undefined && !isPlainObject(body.metadata)) {
      throw errors.badRequest('metadata must be an object');
    }
    if (body.apiVersion !== undefined && body.apiVersion !== type.apiVersion) {
      throw errors.badRequest(
        `the API version in the data (${body.apiVersion}) does not match the expected API version (${type.apiVersion})`,
      );
    }
    if (body.kind !== undefined && !type.guessed && body.kind !== type.kind) {
      throw errors.badRequest(`the kind in the data (${body.kind}) does not match the expected kind (${type.kind})`);
    }
    return { ...body, metadata: { ...(body.metadata ?? {}) } } as KubeObject;
  }

  private checkName(type: ResourceType, name: string) {
    if (name.length > 253 || !NAME.test(name)) {
      throw errors.invalid(type, name, [
        `metadata.name: Invalid value: "${name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character`,
      ]);
    }
  }

  /** `{apiVersion, kind, metadata, …rest}` in the order the API server writes them. */
  private assemble(type: ResourceType, input: KubeObject, metadata: ObjectMeta): KubeObject {
    const { apiVersion: _a, kind: _k, metadata: _m, ...rest } = input;
    return { apiVersion: type.apiVersion, kind: type.kind, metadata, ...clone(rest) };
  }

  /**
   * Type-specific defaults: a Secret's stringData is folded into base64 data and its type defaults to Opaque; a
   * Lease's times are written as MicroTime (six fractional digits).
   */
  private normalize(type: ResourceType, object: KubeObject) {
    if (type.custom) return;
    if (type.kind === 'Lease' && isPlainObject(object.spec)) {
      for (const field of ['acquireTime', 'renewTime']) {
        const value = object.spec[field];
        if (value === undefined || value === null) continue;
        const date = new Date(String(value));
        if (Number.isNaN(date.getTime())) throw errors.badRequest(`spec.${field}: cannot parse "${value}" as a time`);
        object.spec[field] = date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
      }
      return;
    }
    if (type.kind !== 'Secret') return;
    if (isPlainObject(object.stringData)) {
      const data: Record<string, string> = isPlainObject(object.data) ? { ...object.data } : {};
      for (const [key, value] of Object.entries(object.stringData)) {
        data[key] = Buffer.from(String(value), 'utf8').toString('base64');
      }
      object.data = data;
    }
    delete object.stringData;
    if (!object.type) object.type = 'Opaque';
  }

  private checkImmutable(type: ResourceType, current: KubeObject, next: KubeObject) {
    if (type.custom || type.kind !== 'Secret') return;
    if (current.type !== next.type) {
      throw errors.invalid(type, current.metadata.name!, ['type: Invalid value: field is immutable']);
    }
    if (current.immutable === true && (!deepEqual(current.data, next.data) || next.immutable !== true)) {
      throw errors.invalid(type, current.metadata.name!, [
        'data: Forbidden: field is immutable when `immutable` is set',
      ]);
    }
  }

  /** What metadata.generation tracks: everything but metadata, and but status when status is a subresource. */
  private generationView(type: ResourceType, object: KubeObject): Record<string, unknown> {
    const { metadata: _m, apiVersion: _a, kind: _k, ...rest } = object;
    if (type.statusSubresource) delete rest.status;
    return rest;
  }

  /** A custom resource body pruned and defaulted against its CRD schema, as the API server decodes it. */
  private decode(type: ResourceType, input: KubeObject, options: WriteOptions): KubeObject {
    if (!type.schema) return input;
    return decodeCustomResource(type, type.schema, input, options.fieldValidation ?? 'Warn', options.warnings);
  }

  private validate(type: ResourceType, object: KubeObject) {
    const problems = [
      ...(type.schema ? schemaProblems(type.schema, object) : []),
      ...eventProblems(type, object),
      ...(this.options.validate?.(type.kind, clone(object)) ?? []),
    ];
    if (problems.length > 0) throw errors.invalid(type, object.metadata.name ?? '', [...new Set(problems)]);
  }
}

/** Labels, annotations, finalizers and owner references are the metadata a client may set. */
function copyUserMetadata(target: ObjectMeta, source: ObjectMeta) {
  for (const key of ['labels', 'annotations', 'finalizers', 'ownerReferences'] as const) {
    const value = source[key];
    if (value === undefined || value === null) continue;
    if (Array.isArray(value) ? value.length === 0 : Object.keys(value).length === 0) continue;
    target[key] = clone(value) as never;
  }
}

function randomSuffix(): string {
  let out = '';
  for (let i = 0; i < 5; i++) out += GENERATE_ALPHABET[Math.floor(Math.random() * GENERATE_ALPHABET.length)];
  return out;
}

function encodeContinue(rv: number, after: string): string {
  return Buffer.from(JSON.stringify({ rv, after })).toString('base64url');
}

function decodeContinue(token: string): { rv: number; after: string } {
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    if (typeof parsed.rv === 'number' && typeof parsed.after === 'string') return parsed;
  } catch {
    // fall through
  }
  throw errors.badRequest('continue key is not valid: invalid continue token');
}
