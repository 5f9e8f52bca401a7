// The operator's RBAC in the chart equals the API calls its code makes (operator/src/kube/api-calls.ts,
// one entry per KubeClient method): rendered with helm for the default, several namespaces and
// cluster-wide, a rule without a call or a call without a rule fails — and by default nothing
// cluster-wide is granted at all.
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { loadScope } from '../../operator/src/config.ts';
import { API_CALLS, permissions } from '../../operator/src/kube/api-calls.ts';
import { KubeClient } from '../../operator/src/kube/client.ts';
import { renderChart } from '../support/helm.ts';

const NAMESPACE = 'tollgate-system';
// renderChart's release.
const RELEASE = 'tg';
type K8sObject = {
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
} & Record<string, any>;

function render(...sets: string[]): K8sObject[] {
  return parseAllDocuments(renderChart(NAMESPACE, sets))
    .map((doc) => doc.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null);
}

/** Every (group, resource, verb) a role grants, as api-calls.ts spells permissions. */
function granted(role: K8sObject): Set<string> {
  const set = new Set<string>();
  for (const rule of role.rules as Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }>) {
    for (const group of rule.apiGroups)
      for (const resource of rule.resources) for (const verb of rule.verbs) set.add(`${group} ${resource} ${verb}`);
  }
  return set;
}

const operatorObjects = (objects: K8sObject[], kind: string) =>
  objects.filter((o) => o.kind === kind && o.metadata.labels?.['app.kubernetes.io/component'] === 'operator');
const isLeaseRole = (role: K8sObject) => role.metadata.name.endsWith('-leader-election');
const env = (objects: K8sObject[], component: string, kind: string) => {
  const owner = objects.find(
    (o) => o.kind === kind && o.metadata.labels?.['app.kubernetes.io/component'] === component,
  )!;
  const container = owner.spec.template.spec.containers[0];
  return Object.fromEntries(container.env.map((e: { name: string; value?: string }) => [e.name, e.value]));
};

/** Checks every role and binding of one rendering; answers the namespaces with a watched-namespace Role. */
function checkRbac(objects: K8sObject[], clusterWide: boolean): string[] {
  const watched = permissions('watched');
  const roles = operatorObjects(objects, 'Role');
  const clusterRoles = operatorObjects(objects, 'ClusterRole');
  const namespacedRoles = roles.filter((r) => !isLeaseRole(r));
  for (const role of clusterWide ? clusterRoles : namespacedRoles) {
    expect([...granted(role)].sort(), `${role.kind} ${role.metadata.namespace ?? ''}/${role.metadata.name}`).toEqual(
      [...watched].sort(),
    );
  }
  if (clusterWide) {
    expect(clusterRoles).toHaveLength(1);
    expect(namespacedRoles).toHaveLength(0);
  } else {
    expect(clusterRoles, 'no ClusterRole unless operator.clusterWide').toHaveLength(0);
    expect(operatorObjects(objects, 'ClusterRoleBinding')).toHaveLength(0);
  }
  const lease = roles.filter(isLeaseRole);
  expect(lease).toHaveLength(1);
  expect(lease[0]!.metadata.namespace).toBe(NAMESPACE);
  expect([...granted(lease[0]!)].sort()).toEqual([...permissions('lease')].sort());
  // get and update are limited to the operator's own Lease.
  for (const rule of lease[0]!.rules) {
    if (!rule.verbs.includes('create')) expect(rule.resourceNames).toEqual([`${RELEASE}-tollgate-operator`]);
  }

  // Every role is bound to the operator's service account, and nothing else is.
  const sa = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === `${RELEASE}-tollgate-operator`)!.spec
    .template.spec.serviceAccountName;
  const bindings = [...operatorObjects(objects, 'RoleBinding'), ...operatorObjects(objects, 'ClusterRoleBinding')];
  expect(bindings).toHaveLength(roles.length + clusterRoles.length);
  for (const role of [...roles, ...clusterRoles]) {
    const binding = bindings.find(
      (b) => b.roleRef.name === role.metadata.name && b.metadata.namespace === role.metadata.namespace,
    )!;
    expect(binding.roleRef).toEqual({
      apiGroup: 'rbac.authorization.k8s.io',
      kind: role.kind,
      name: role.metadata.name,
    });
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: sa, namespace: NAMESPACE }]);
  }
  return namespacedRoles.map((r) => r.metadata.namespace!).sort();
}

describe('operator RBAC = the API calls the operator makes', () => {
  it('lists every KubeClient method as an API call (a new call needs an entry, and so a rule)', () => {
    const methods = Object.getOwnPropertyNames(KubeClient.prototype).filter((name) => name !== 'constructor');
    expect(Object.keys(API_CALLS).sort()).toEqual(methods.sort());
  });

  it('by default: one Role in the release namespace, no cluster-wide Secret rights', () => {
    const objects = render();
    expect(checkRbac(objects, false)).toEqual([NAMESPACE]);
    expect(env(objects, 'operator', 'Deployment').WATCH_NAMESPACES).toBe(NAMESPACE);
    expect(loadScope(env(objects, 'operator', 'Deployment'))).toEqual({
      watchNamespaces: [NAMESPACE],
      instance: RELEASE,
      claimUnlabelled: true,
    });
  });

  it('with several namespaces: a Role and RoleBinding in each, and the operator watches exactly those', () => {
    const objects = render('operator.watchNamespaces={team-a,team-b}');
    expect(checkRbac(objects, false)).toEqual(['team-a', 'team-b']);
    for (const [component, kind] of [
      ['operator', 'Deployment'],
      ['operator-cleanup', 'Job'],
    ]) {
      expect(loadScope(env(objects, component!, kind!)).watchNamespaces).toEqual(['team-a', 'team-b']);
    }
  });

  it('cluster-wide only when asked for: one ClusterRole, every namespace watched', () => {
    const objects = render('operator.clusterWide=true');
    checkRbac(objects, true);
    expect(env(objects, 'operator', 'Deployment').WATCH_NAMESPACES).toBe('');
  });

  it('hands the instance, claim and AccessToken users to the operator as its config loader reads them', () => {
    const objects = render(
      'operator.instance=blue',
      'operator.claimUnlabelled=false',
      'operator.accessTokenUsers.team-a={ci-bot,root}',
    );
    const operator = env(objects, 'operator', 'Deployment');
    expect(loadScope(operator)).toMatchObject({ instance: 'blue', claimUnlabelled: false });
    expect(JSON.parse(operator.ACCESS_TOKEN_USERS)).toEqual({ 'team-a': ['ci-bot', 'root'] });
  });

  it('runs remove-finalizers in a pre-delete hook Job with the operator service account, unless turned off', () => {
    const objects = render();
    const job = objects.find(
      (o) => o.kind === 'Job' && o.metadata.labels?.['app.kubernetes.io/component'] === 'operator-cleanup',
    )!;
    expect(job.metadata.annotations).toMatchObject({
      'helm.sh/hook': 'pre-delete',
      'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded',
    });
    const pod = job.spec.template.spec;
    expect(pod.containers[0].command).toEqual(['node', 'operator/src/main.ts', 'remove-finalizers']);
    expect(pod.serviceAccountName).toBe(`${RELEASE}-tollgate-operator`);
    expect(env(objects, 'operator-cleanup', 'Job')).toMatchObject({
      LEASE_NAME: `${RELEASE}-tollgate-operator`,
      INSTANCE_NAME: RELEASE,
    });
    const off = render('operator.cleanupOnUninstall=false');
    expect(off.some((o) => o.metadata.labels?.['app.kubernetes.io/component'] === 'operator-cleanup')).toBe(false);
  });

  it('refuses cluster-wide together with a namespace list', () => {
    expect(() => render('operator.clusterWide=true', 'operator.watchNamespaces={team-a}')).toThrow(
      /leave operator.watchNamespaces empty/,
    );
  });
});
