import type { ResourceDefinition } from './fake-kube/index.ts';

/**
 * events.k8s.io/v1 Events, which every real API server serves and fake-kube does not by default:
 * register them (`startFakeKube({ resources: [EVENTS_RESOURCE] })`) to see the Events the operator records.
 */
export const EVENTS_RESOURCE: ResourceDefinition = {
  group: 'events.k8s.io',
  version: 'v1',
  plural: 'events',
  kind: 'Event',
  statusSubresource: false,
  generation: false,
};
