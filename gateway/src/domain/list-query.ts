import { AppError, defineErrors } from '../errors.ts';

/**
 * The generic listing every resource service offers (the /rest dialect and the /api pages both use it):
 * filters, one sort field from a whitelist, and an offset/limit window.
 */
export interface ListQuery<F> {
  filters?: F | undefined;
  sort?: { field: string; order: 'ASC' | 'DESC' | 'asc' | 'desc' } | undefined;
  offset: number;
  limit: number;
}

export interface ListResult<T> {
  items: T[];
  total: number;
}

export const LIST_ERRORS = defineErrors({
  SORT_FIELD_UNSUPPORTED: {
    status: 400,
    message: { zh: '不支持按 {field} 排序，可选：{fields}', en: 'Cannot sort by {field}; sortable fields: {fields}' },
  },
});

/** The most rows one call may ask for, so a careless range cannot pull a whole table. */
export const MAX_LIST_LIMIT = 1000;

/** Checks the sort field against the whitelist and clamps the window. */
export function checkListQuery<Field extends string>(
  query: ListQuery<unknown>,
  sortable: readonly Field[],
  fallback: Field,
): { field: Field; order: 'asc' | 'desc'; offset: number; limit: number } {
  const field = query.sort?.field ?? fallback;
  if (!(sortable as readonly string[]).includes(field)) {
    throw new AppError(LIST_ERRORS.SORT_FIELD_UNSUPPORTED, { field, fields: sortable.join(', ') });
  }
  const order = query.sort ? (query.sort.order.toLowerCase() === 'asc' ? 'asc' : 'desc') : 'desc';
  return {
    field: field as Field,
    order,
    offset: Math.max(0, Math.trunc(query.offset) || 0),
    limit: Math.min(MAX_LIST_LIMIT, Math.max(1, Math.trunc(query.limit) || 1)),
  };
}
