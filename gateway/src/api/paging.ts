/** new-api's paging: `p` is 1-based, `page_size` (or `ps`, `size`) defaults to 10 and stops at 100. */
export const pagingQuery = {
  p: { type: 'integer', description: 'Page number, 1-based (0 reads as 1)' },
  page_size: { type: 'integer', description: 'Items per page, default 10, at most 100' },
  ps: { type: 'integer', description: 'Alias of page_size' },
  size: { type: 'integer', description: 'Alias of page_size' },
} as const;

export interface PagingInput {
  p?: number | undefined;
  page_size?: number | undefined;
  ps?: number | undefined;
  size?: number | undefined;
}

export function paging(query: PagingInput): { page: number; pageSize: number; offset: number } {
  const page = Math.max(1, query.p ?? 1);
  const requested = query.page_size ?? query.ps ?? query.size ?? 10;
  const pageSize = Math.min(100, Math.max(1, requested));
  return { page, pageSize, offset: (page - 1) * pageSize };
}

export function pageOf<T>(items: T[], total: number, page: number, pageSize: number) {
  return { items, total, page, page_size: pageSize };
}
