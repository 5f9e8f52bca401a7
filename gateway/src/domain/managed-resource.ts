/**
 * Records written from Kubernetes custom resources (DESIGN.md §4): who wrote them and for which
 * resource. The operator is their only writer; the API refuses edits to them (see managed.ts).
 */

/** `managed_by` of every record the operator writes. */
export const OPERATOR_MANAGER = 'tollgate-operator';

/** The custom resource a record belongs to; `uid` tells a re-created resource of the same name apart. */
export interface ResourceRef {
  namespace: string;
  name: string;
  uid: string;
}

/** The columns that mark a record as owned by `owner`. */
export function managedColumns(owner: ResourceRef) {
  return {
    managed_by: OPERATOR_MANAGER,
    managed_namespace: owner.namespace,
    managed_name: owner.name,
    managed_uid: owner.uid,
  };
}

/** A record owned by the operator, as the orphan sweep sees it. */
export interface ManagedRecordOwner {
  namespace: string;
  name: string;
  uid: string;
}

/** A spec the gateway's rules refuse: a stable code and an English message for the resource's status. */
export interface SpecRejection {
  ok: false;
  code: string;
  message: string;
}

/** The namespace/name of the resource a row belongs to, as messages name it. */
export const resourceName = (row: { managed_namespace: string | null; managed_name: string | null }) =>
  `${row.managed_namespace ?? ''}/${row.managed_name ?? ''}`;
