import type { ResourceType } from './resources.ts';
import type { KubeObject } from './store.ts';

/**
 * kube-apiserver's validation of Events, for both APIs that serve them: core/v1 keeps the lenient legacy rules
 * (the involved object's namespace must match; a new-style event with eventTime also needs its reporting
 * fields), events.k8s.io/v1 requires eventTime, a Normal or Warning type, reportingController,
 * reportingInstance, action and reason.
 */

const present = (value: unknown) => typeof value === 'string' && value !== '';

export function eventProblems(type: ResourceType, event: KubeObject): string[] {
  if (type.plural !== 'events' || (type.group !== '' && type.group !== 'events.k8s.io')) return [];
  const modern = type.group === 'events.k8s.io';
  const namespace = event.metadata.namespace ?? '';
  const involved = (modern ? event.regarding : event.involvedObject) ?? {};
  const problems: string[] = [];
  const required = (field: string, value: unknown) => {
    if (!present(value)) problems.push(`${field}: Required value`);
  };
  const mismatch = `involvedObject.namespace: Invalid value: "${involved.namespace ?? ''}": does not match event.namespace`;

  if (!present(event.eventTime)) {
    const matches = present(involved.namespace)
      ? involved.namespace === namespace
      : ['', 'default'].includes(namespace);
    if (!matches) problems.push(mismatch);
    if (modern) problems.push('eventTime: Required value');
  } else {
    if (!present(involved.namespace) && !['default', 'kube-system'].includes(namespace)) problems.push(mismatch);
    const controller = modern ? 'reportingController' : 'reportingComponent';
    required(controller, event[controller]);
    required('reportingInstance', event.reportingInstance);
    required('action', event.action);
    required('reason', event.reason);
  }
  if (modern && event.type !== 'Normal' && event.type !== 'Warning') {
    problems.push(`type: Invalid value: "": has invalid value: ${event.type ?? ''}`);
  }
  return problems;
}
