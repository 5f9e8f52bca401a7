import { GROUP, PLURALS } from '../types/generated.ts';
import type { KubeClientMethod } from './client.ts';

/**
 * One Kubernetes API call the operator makes: what RBAC must grant for it. `scope` says where:
 * `watched` in every namespace the operator watches (or cluster-wide), `lease` in the operator's own
 * namespace (leader election).
 */
export interface ApiCall {
  group: string;
  resources: readonly string[];
  subresource?: string;
  verbs: readonly string[];
  scope: 'watched' | 'lease';
}

const TOLLGATE_PLURALS = Object.values(PLURALS);

/**
 * Every call, by the KubeClient method that makes it (the type makes a new method without an entry
 * fail to compile). The chart's RBAC rules must equal the union of these (tests/k8s/operator-rbac.test.ts).
 * Informers list and then watch through `listResources` and `listSecrets`, so those carry `watch` too.
 */
export const API_CALLS: Readonly<Record<KubeClientMethod, ApiCall>> = {
  listResources: { group: GROUP, resources: TOLLGATE_PLURALS, verbs: ['list', 'watch'], scope: 'watched' },
  getResource: { group: GROUP, resources: TOLLGATE_PLURALS, verbs: ['get'], scope: 'watched' },
  patchMetadata: { group: GROUP, resources: TOLLGATE_PLURALS, verbs: ['patch'], scope: 'watched' },
  patchStatus: { group: GROUP, resources: TOLLGATE_PLURALS, subresource: 'status', verbs: ['patch'], scope: 'watched' },
  listSecrets: { group: '', resources: ['secrets'], verbs: ['list', 'watch'], scope: 'watched' },
  readSecret: { group: '', resources: ['secrets'], verbs: ['get'], scope: 'watched' },
  createSecret: { group: '', resources: ['secrets'], verbs: ['create'], scope: 'watched' },
  replaceSecret: { group: '', resources: ['secrets'], verbs: ['update'], scope: 'watched' },
  deleteSecret: { group: '', resources: ['secrets'], verbs: ['delete'], scope: 'watched' },
  createEvent: { group: 'events.k8s.io', resources: ['events'], verbs: ['create'], scope: 'watched' },
  patchEvent: { group: 'events.k8s.io', resources: ['events'], verbs: ['patch'], scope: 'watched' },
  readLease: { group: 'coordination.k8s.io', resources: ['leases'], verbs: ['get'], scope: 'lease' },
  createLease: { group: 'coordination.k8s.io', resources: ['leases'], verbs: ['create'], scope: 'lease' },
  replaceLease: { group: 'coordination.k8s.io', resources: ['leases'], verbs: ['update'], scope: 'lease' },
};

/** One permission: `group resource[/subresource] verb`, the unit RBAC rules and calls are compared in. */
export function permissions(scope: ApiCall['scope']): Set<string> {
  const granted = new Set<string>();
  for (const call of Object.values(API_CALLS)) {
    if (call.scope !== scope) continue;
    for (const resource of call.resources) {
      for (const verb of call.verbs) {
        granted.add(`${call.group} ${call.subresource ? `${resource}/${call.subresource}` : resource} ${verb}`);
      }
    }
  }
  return granted;
}
