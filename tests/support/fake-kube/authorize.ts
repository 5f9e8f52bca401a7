import { errors } from './errors.ts';
import { deepEqual } from './patch.ts';
import type { ResourceRegistry, ResourceType } from './resources.ts';
import type { KubeObject } from './store.ts';

/**
 * RBAC as kube-apiserver's authorizer applies it: a request (user, verb, API group, resource[/subresource],
 * namespace, name) is allowed when one granted PolicyRule matches it; otherwise 403 Forbidden with the real
 * message. Also OwnerReferencesPermissionEnforcement, the admission plugin OpenShift turns on.
 */

/**
 * A Role/ClusterRole rule (rbac.authorization.k8s.io/v1 PolicyRule). Non-resource URLs are not modelled:
 * discovery and health paths are open to every authenticated user, as the default system:discovery binding does.
 */
export interface PolicyRule {
  apiGroups?: string[];
  /** Plurals, `plural/subresource`, `*`, or `*` followed by `/subresource` (that subresource of any kind). */
  resources?: string[];
  verbs: string[];
  /** When set, only requests naming one of these objects match (never create, nor a list without a name). */
  resourceNames?: string[];
}

/** What the server's token may do. */
export interface RbacPolicy {
  /** The user the token authenticates as, e.g. `system:serviceaccount:tollgate:tollgate-operator`. */
  user: string;
  /** Granted in every namespace and at the cluster scope (ClusterRoles bound by ClusterRoleBindings). */
  clusterRules?: PolicyRule[];
  /** Granted in one namespace only (Roles or ClusterRoles bound by a RoleBinding there). */
  namespaceRules?: Record<string, PolicyRule[]>;
  /**
   * OwnerReferencesPermissionEnforcement (off in upstream kube-apiserver, on in OpenShift): changing
   * ownerReferences needs `delete` on the object, and setting `blockOwnerDeletion: true` needs `update` on the
   * owner's `<plural>/finalizers`.
   */
  ownerReferencesPermissionEnforcement?: boolean;
}

/** The authorization attributes of a resource request. */
export interface RequestAttributes {
  verb: string;
  group: string;
  resource: string;
  subresource?: string;
  /** Empty or absent at the cluster scope. */
  namespace?: string;
  name?: string;
}

function ruleAllows(rule: PolicyRule, request: RequestAttributes): boolean {
  const has = (list: string[] | undefined, value: string) => (list ?? []).some((v) => v === '*' || v === value);
  if (!has(rule.verbs, request.verb) || !has(rule.apiGroups, request.group)) return false;
  const combined = request.subresource ? `${request.resource}/${request.subresource}` : request.resource;
  const resourceMatches = (rule.resources ?? []).some(
    (r) => r === '*' || r === combined || (request.subresource !== undefined && r === `*/${request.subresource}`),
  );
  if (!resourceMatches) return false;
  if (!rule.resourceNames || rule.resourceNames.length === 0) return true;
  return rule.resourceNames.includes(request.name ?? '');
}

/** Whether the policy grants the request. */
export function allows(policy: RbacPolicy, request: RequestAttributes): boolean {
  const rules = [...(policy.clusterRules ?? [])];
  if (request.namespace) rules.push(...(policy.namespaceRules?.[request.namespace] ?? []));
  return rules.some((rule) => ruleAllows(rule, request));
}

/** kube-apiserver's forbidden message: `User "u" cannot list resource "secrets" in API group "" in the namespace "x"`. */
export function forbiddenMessage(user: string, request: RequestAttributes): string {
  const resource = request.subresource ? `${request.resource}/${request.subresource}` : request.resource;
  const scope = request.namespace ? `in the namespace "${request.namespace}"` : 'at the cluster scope';
  return `User "${user}" cannot ${request.verb} resource "${resource}" in API group "${request.group}" ${scope}`;
}

/** Throws the 403 kube-apiserver answers when the policy does not grant the request. */
export function authorize(policy: RbacPolicy, request: RequestAttributes): void {
  if (allows(policy, request)) return;
  throw errors.forbidden(request.group, request.resource, request.name, forbiddenMessage(policy.user, request));
}

type OwnerReference = { apiVersion?: string; kind?: string; name?: string; uid?: string; blockOwnerDeletion?: boolean };

const ownerRefs = (object: KubeObject | undefined): OwnerReference[] =>
  (object?.metadata.ownerReferences ?? []) as OwnerReference[];

/**
 * The OwnerReferencesPermissionEnforcement check for one write (`previous` undefined on create), as the
 * admission plugin words its refusals.
 */
export function checkOwnerReferences(
  policy: RbacPolicy,
  registry: ResourceRegistry,
  type: ResourceType,
  namespace: string | undefined,
  previous: KubeObject | undefined,
  next: KubeObject,
): void {
  if (deepEqual(ownerRefs(previous), ownerRefs(next))) return;
  const name = next.metadata.name;
  const refuse = (why: string) => errors.forbidden(type.group, type.plural, name, why);
  const scope = namespace ? { namespace } : {};
  if (previous && !allows(policy, { verb: 'delete', group: type.group, resource: type.plural, name, ...scope })) {
    throw refuse("cannot set an ownerRef on a resource you can't delete: , <nil>");
  }
  const blockedBefore = new Set(
    ownerRefs(previous)
      .filter((r) => r.blockOwnerDeletion)
      .map((r) => r.uid),
  );
  for (const ref of ownerRefs(next)) {
    if (!ref.blockOwnerDeletion || blockedBefore.has(ref.uid)) continue;
    const owner = registry.all().find((t) => t.apiVersion === ref.apiVersion && t.kind === ref.kind);
    if (!owner) {
      throw refuse(
        `cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion ${ref.apiVersion} Kind ${ref.kind}: no matches for kind "${ref.kind}" in version "${ref.apiVersion}"`,
      );
    }
    const finalizers: RequestAttributes = {
      verb: 'update',
      group: owner.group,
      resource: owner.plural,
      subresource: 'finalizers',
      ...scope,
    };
    if (ref.name) finalizers.name = ref.name;
    if (!allows(policy, finalizers)) {
      throw refuse(
        "cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: , <nil>",
      );
    }
  }
}
