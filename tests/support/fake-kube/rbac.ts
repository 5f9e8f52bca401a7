import { parseAllDocuments } from 'yaml';
import type { PolicyRule, RbacPolicy } from './authorize.ts';

/**
 * Turns rendered RBAC manifests (the output of `helm template`) into the fake server's `rbac` option for one
 * service account: the rules of every Role and ClusterRole bound to it, per namespace (RoleBindings) or
 * cluster-wide (ClusterRoleBindings), with ClusterRole aggregation resolved among the rendered ClusterRoles.
 */

export interface ServiceAccountRef {
  namespace: string;
  name: string;
}

export interface RbacFromManifestsOptions extends Pick<RbacPolicy, 'ownerReferencesPermissionEnforcement'> {
  /** Namespace of Roles and RoleBindings rendered without one (helm's `--namespace`); default the account's. */
  namespace?: string;
}

interface Subject {
  kind?: string;
  name?: string;
  namespace?: string;
}

interface Manifest {
  kind?: string;
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string> };
  rules?: PolicyRule[] | null;
  aggregationRule?: { clusterRoleSelectors?: Array<{ matchLabels?: Record<string, string> }> };
  roleRef?: { kind?: string; name?: string };
  subjects?: Subject[] | null;
}

/** The Kubernetes user name of a service account. */
export function serviceAccountUser(account: ServiceAccountRef): string {
  return `system:serviceaccount:${account.namespace}:${account.name}`;
}

/** Whether a binding subject names the account (directly, as its user, or through its groups). */
function bindsAccount(subject: Subject, bindingNamespace: string | undefined, account: ServiceAccountRef): boolean {
  switch (subject.kind) {
    case 'ServiceAccount':
      return subject.name === account.name && (subject.namespace || bindingNamespace) === account.namespace;
    case 'User':
      return subject.name === serviceAccountUser(account);
    case 'Group':
      return ['system:serviceaccounts', `system:serviceaccounts:${account.namespace}`, 'system:authenticated'].includes(
        subject.name ?? '',
      );
    default:
      return false;
  }
}

/** Every object of the rendered YAML (one string or several), `List` kinds unwrapped. */
function manifests(yaml: string | string[]): Manifest[] {
  const out: Manifest[] = [];
  for (const text of Array.isArray(yaml) ? yaml : [yaml]) {
    for (const document of parseAllDocuments(text)) {
      if (document.errors.length > 0) throw new Error(`rbac: ${document.errors[0]!.message}`);
      const value = document.toJS() as (Manifest & { items?: Manifest[] }) | null;
      if (!value) continue;
      if (value.kind === 'List' || value.kind?.endsWith('List')) out.push(...(value.items ?? []));
      else out.push(value);
    }
  }
  return out;
}

function clusterRoleRules(name: string, clusterRoles: Map<string, Manifest>, seen = new Set<string>()): PolicyRule[] {
  const role = clusterRoles.get(name);
  if (!role || seen.has(name)) return [];
  seen.add(name);
  const rules = [...(role.rules ?? [])];
  for (const selector of role.aggregationRule?.clusterRoleSelectors ?? []) {
    for (const [other, candidate] of clusterRoles) {
      const labels = candidate.metadata?.labels ?? {};
      const matches = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
      if (matches && other !== name) rules.push(...clusterRoleRules(other, clusterRoles, seen));
    }
  }
  return rules;
}

/**
 * The RBAC policy the account gets from these manifests. A binding to a role that is not in the YAML grants
 * nothing (as a dangling roleRef does on a cluster).
 */
export function rbacFromManifests(
  yaml: string | string[],
  account: ServiceAccountRef,
  options: RbacFromManifestsOptions = {},
): RbacPolicy {
  const { namespace: releaseNamespace = account.namespace, ...policyOptions } = options;
  const objects = manifests(yaml);
  const namespaceOf = (object: Manifest) => object.metadata?.namespace || releaseNamespace;
  const roles = new Map<string, Manifest>();
  const clusterRoles = new Map<string, Manifest>();
  for (const object of objects) {
    const name = object.metadata?.name ?? '';
    if (object.kind === 'Role') roles.set(`${namespaceOf(object)}/${name}`, object);
    if (object.kind === 'ClusterRole') clusterRoles.set(name, object);
  }
  const policy: RbacPolicy = {
    user: serviceAccountUser(account),
    clusterRules: [],
    namespaceRules: {},
    ...policyOptions,
  };
  for (const binding of objects) {
    if (binding.kind !== 'RoleBinding' && binding.kind !== 'ClusterRoleBinding') continue;
    const namespace = binding.kind === 'RoleBinding' ? namespaceOf(binding) : undefined;
    if (!(binding.subjects ?? []).some((subject) => bindsAccount(subject, namespace, account))) continue;
    const ref = binding.roleRef ?? {};
    const rules =
      ref.kind === 'Role'
        ? namespace !== undefined
          ? (roles.get(`${namespace}/${ref.name}`)?.rules ?? [])
          : []
        : clusterRoleRules(ref.name ?? '', clusterRoles);
    if (namespace === undefined) policy.clusterRules!.push(...rules);
    else policy.namespaceRules![namespace] = [...(policy.namespaceRules![namespace] ?? []), ...rules];
  }
  return policy;
}
