import { AppError, defineErrors } from '../errors.ts';

export const MANAGED_ERRORS = defineErrors({
  MANAGED_BY_RESOURCE: {
    status: 409,
    message: {
      zh: '该记录由 Kubernetes 资源 {resource} 管理，请修改该资源：{fields}',
      en: 'This record is managed by the Kubernetes resource {resource}; edit that resource instead: {fields}',
    },
  },
});

/** The columns every record declared as a custom resource carries (DESIGN.md §4). */
export interface ManagedColumns {
  managed_by: string | null;
  managed_namespace: string | null;
  managed_name: string | null;
}

export function isManaged(row: ManagedColumns): boolean {
  return row.managed_by !== null;
}

export function managedResource(row: ManagedColumns, kind: string): string {
  return `${kind} ${row.managed_namespace ?? ''}/${row.managed_name ?? ''}`;
}

/**
 * Refuses a change to fields a custom resource owns (configuration), naming the resource to edit;
 * runtime fields (status set by health checks, balance, used quota) stay writable by the gateway.
 * `changed` lists the fields the caller wants to change; `managedFields` those the resource owns.
 */
export function assertUnmanaged(
  row: ManagedColumns,
  kind: string,
  changed: readonly string[],
  managedFields: readonly string[] | 'all' = 'all',
): void {
  if (!isManaged(row)) return;
  const owned = managedFields === 'all' ? changed : changed.filter((field) => managedFields.includes(field));
  if (owned.length > 0) {
    throw new AppError(MANAGED_ERRORS.MANAGED_BY_RESOURCE, {
      resource: managedResource(row, kind),
      fields: owned.join(', '),
    });
  }
}
