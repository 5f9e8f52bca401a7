import type { Kysely } from 'kysely';
import type { Database } from '../store/database.ts';

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

/** Tables whose rows custom resources may own. */
export type ManagedTable = 'channels' | 'tokens' | 'model_prices' | 'groups' | 'options';

/**
 * Every resource that owns rows of `table` (deleted tokens do not count), for finding rows whose
 * resource is gone.
 */
export async function managedOwners(db: Kysely<Database>, table: ManagedTable): Promise<ManagedRecordOwner[]> {
  // Every managed table has the same managed columns; the builder is typed as tokens, the one that
  // also needs its soft-deleted rows left out.
  let query = db
    .selectFrom(table as 'tokens')
    .select(['managed_namespace', 'managed_name', 'managed_uid'])
    .distinct()
    .where('managed_by', '=', OPERATOR_MANAGER);
  if (table === 'tokens') query = query.where('deleted_at', 'is', null);
  const rows = await query.execute();
  return rows.map((r) => ({
    namespace: r.managed_namespace ?? '',
    name: r.managed_name ?? '',
    uid: r.managed_uid ?? '',
  }));
}
