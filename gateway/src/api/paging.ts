/** new-api's paging: `p` is 1-based, `page_size` (or `ps`, `size`) defaults to 10 and stops at 100. */
export const pagingQuery = {
  p: { type: 'integer' },
  page_size: { type: 'integer' },
  ps: { type: 'integer' },
  size: { type: 'integer' },
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
