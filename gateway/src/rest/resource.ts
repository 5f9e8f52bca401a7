import type { ListQuery, ListResult } from '../domain/list-query.ts';
import type { UserRow } from '../store/database.ts';

/** What react-admin's filter object may carry: `q` (full-text search), `id` (getMany), resource fields. */
export type RestFilters = Record<string, unknown>;

/**
 * One console resource in the simple-REST dialect, adapted onto a domain service. Every method gets
 * the signed-in actor, so scoping (own tokens, own logs) stays in the domain.
 */
export interface RestResource {
  /** Who may use it at all. */
  guard: 'user' | 'admin';
  list(query: ListQuery<RestFilters>, actor: UserRow): Promise<ListResult<{ id: number }>>;
  getOne(id: number, actor: UserRow): Promise<{ id: number }>;
  create?(data: Record<string, unknown>, actor: UserRow): Promise<{ id: number }>;
  update?(id: number, data: Record<string, unknown>, actor: UserRow): Promise<{ id: number }>;
  /** Answers the record as it was before deletion (react-admin shows it in the undo notice). */
  delete?(id: number, actor: UserRow): Promise<{ id: number }>;
}

/** The `id` filter of getMany: a list of ids (or one id). */
export function idsFilter(filters: RestFilters | undefined): number[] | undefined {
  const raw = filters?.id;
  if (raw === undefined) return undefined;
  return (Array.isArray(raw) ? raw : [raw]).map(Number).filter(Number.isSafeInteger);
}

export function textFilter(filters: RestFilters | undefined, key: string): string | undefined {
  const value = filters?.[key];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

export function numberFilter(filters: RestFilters | undefined, key: string): number | undefined {
  const value = filters?.[key];
  const n = typeof value === 'number' ? value : typeof value === 'string' && value !== '' ? Number(value) : Number.NaN;
  return Number.isFinite(n) ? n : undefined;
}
