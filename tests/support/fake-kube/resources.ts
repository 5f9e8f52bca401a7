import { type JsonSchema, type LoadedCrd, loadCrds } from '../crd-schemas.ts';

/**
 * The kinds the fake API server knows: their group, version, plural, Kind, scope and which Kubernetes rules
 * (status subresource, metadata.generation) apply to them.
 */

/** What a caller registers: a resource type as a CRD (or the built-in registry) declares it. */
export interface ResourceDefinition {
  /** API group; `''` for the core group (`/api/v1`). */
  group: string;
  version: string;
  /** Lower-case plural used in paths, e.g. `channels`. */
  plural: string;
  /** CamelCase Kind, e.g. `Channel`. */
  kind: string;
  singular?: string;
  shortNames?: string[];
  /** Default true. */
  namespaced?: boolean;
  /** `/status` subresource: main-resource writes ignore `.status`, `/status` writes change only `.status`. Default: true for custom resources, false otherwise. */
  statusSubresource?: boolean;
  /** Keep `metadata.generation` (starts at 1, bumped when anything but metadata — and status, with a status subresource — changes). Default: true for custom resources. */
  generation?: boolean;
  /** A CRD's structural openAPIV3Schema: writes are pruned, defaulted and validated against it (custom resources only). */
  schema?: JsonSchema;
}

export interface ResourceType {
  group: string;
  version: string;
  plural: string;
  kind: string;
  singular: string;
  shortNames: string[];
  namespaced: boolean;
  statusSubresource: boolean;
  generation: boolean;
  schema?: JsonSchema;
  /** True for custom resources (anything outside the built-in groups). */
  custom: boolean;
  /** `v1` or `group/version`. */
  apiVersion: string;
  /** `ChannelList`. */
  listKind: string;
  /** `channels.tollgate.dev`, or `secrets` for the core group: the "group resource" Kubernetes names in messages. */
  groupResource: string;
  /** Whether the kind was guessed from a path rather than registered. */
  guessed: boolean;
}

/** API groups served by kube-apiserver itself: unknown resources in them are 404, never auto-registered. */
const BUILT_IN_GROUPS = new Set([
  '',
  'coordination.k8s.io',
  'apps',
  'batch',
  'rbac.authorization.k8s.io',
  'events.k8s.io',
]);

export const TOLLGATE_GROUP = 'tollgate.dev';
export const TOLLGATE_VERSION = 'v1alpha1';

export const BUILT_IN_RESOURCES: ResourceDefinition[] = [
  { group: '', version: 'v1', plural: 'secrets', kind: 'Secret', statusSubresource: false, generation: false },
  {
    group: 'coordination.k8s.io',
    version: 'v1',
    plural: 'leases',
    kind: 'Lease',
    statusSubresource: false,
    generation: false,
  },
  { group: '', version: 'v1', plural: 'events', kind: 'Event', shortNames: ['ev'], statusSubresource: false },
  {
    group: 'events.k8s.io',
    version: 'v1',
    plural: 'events',
    kind: 'Event',
    shortNames: ['ev'],
    statusSubresource: false,
    generation: false,
  },
];

/** A CustomResourceDefinition's storage version as a kind the fake serves, with its schema. */
export function crdResource(crd: LoadedCrd): ResourceDefinition {
  const { names } = crd.definition.spec;
  const version = crd.definition.spec.versions.find((v) => v.name === crd.version)!;
  const definition: ResourceDefinition = {
    group: crd.group,
    version: crd.version,
    plural: crd.plural,
    kind: crd.kind,
    namespaced: crd.namespaced,
    statusSubresource: version.subresources?.status !== undefined,
    generation: true,
    schema: crd.schema,
  };
  if (names.singular) definition.singular = names.singular;
  if (names.shortNames) definition.shortNames = names.shortNames;
  return definition;
}

/** The kinds of the repo's crds/ folder, as served by default. */
export const TOLLGATE_RESOURCES: ResourceDefinition[] = loadCrds().map(crdResource);

function complete(def: ResourceDefinition, guessed = false): ResourceType {
  const custom = !BUILT_IN_GROUPS.has(def.group);
  return {
    group: def.group,
    version: def.version,
    plural: def.plural,
    kind: def.kind,
    singular: def.singular ?? def.kind.toLowerCase(),
    shortNames: def.shortNames ?? [],
    namespaced: def.namespaced ?? true,
    statusSubresource: def.statusSubresource ?? custom,
    generation: def.generation ?? custom,
    ...(custom && def.schema ? { schema: def.schema } : {}),
    custom,
    apiVersion: def.group ? `${def.group}/${def.version}` : def.version,
    listKind: `${def.kind}List`,
    groupResource: def.group ? `${def.plural}.${def.group}` : def.plural,
    guessed,
  };
}

/** `accesstokens` → `Accesstoken`: the best guess without a registration (register the kind to get it right). */
function guessKind(plural: string): string {
  const singular = plural.endsWith('ies')
    ? `${plural.slice(0, -3)}y`
    : plural.endsWith('ses')
      ? plural.slice(0, -2)
      : plural.endsWith('s')
        ? plural.slice(0, -1)
        : plural;
  return singular.charAt(0).toUpperCase() + singular.slice(1);
}

export class ResourceRegistry {
  private readonly types = new Map<string, ResourceType>();
  private readonly autoRegister: boolean;

  constructor(definitions: ResourceDefinition[], autoRegister: boolean) {
    this.autoRegister = autoRegister;
    for (const def of definitions) this.register(def);
  }

  register(def: ResourceDefinition): ResourceType {
    const type = complete(def);
    this.types.set(this.key(def.group, def.version, def.plural), type);
    return type;
  }

  all(): ResourceType[] {
    return [...this.types.values()];
  }

  /** The type served at `/apis/{group}/{version}/…/{plural}`; unknown custom plurals are registered on the fly when allowed. */
  byPath(group: string, version: string, plural: string): ResourceType | undefined {
    const found = this.types.get(this.key(group, version, plural));
    if (found || !this.autoRegister || BUILT_IN_GROUPS.has(group) || !/^[a-z0-9-]+$/.test(plural)) return found;
    const type = complete({ group, version, plural, kind: guessKind(plural) }, true);
    this.types.set(this.key(group, version, plural), type);
    return type;
  }

  /** A guessed kind takes the Kind of the first object created through it. */
  adoptKind(type: ResourceType, kind: unknown): void {
    if (!type.guessed || typeof kind !== 'string' || !kind) return;
    type.kind = kind;
    type.listKind = `${kind}List`;
    type.singular = kind.toLowerCase();
    type.guessed = false;
  }

  /** Finds a type by plural (`channels`), Kind (`Channel`), `plural.group` or short name, for the test helpers. */
  resolve(name: string): ResourceType {
    const lower = name.toLowerCase();
    for (const type of this.types.values()) {
      if (
        type.plural === lower ||
        type.kind.toLowerCase() === lower ||
        type.singular === lower ||
        type.groupResource === lower ||
        type.shortNames.includes(lower)
      ) {
        return type;
      }
    }
    throw new Error(`fake-kube: unknown resource "${name}" (known: ${this.all().map((t) => t.groupResource)})`);
  }

  groupVersions(): Array<{ group: string; version: string }> {
    const seen = new Map<string, { group: string; version: string }>();
    for (const t of this.types.values()) seen.set(`${t.group}/${t.version}`, { group: t.group, version: t.version });
    return [...seen.values()];
  }

  private key(group: string, version: string, plural: string): string {
    return `${group}/${version}/${plural}`;
  }
}
