import type { ListQuery, ListResult } from '../domain/list-query.ts';
import { AppError } from '../errors.ts';
import { HTTP_ERRORS } from '../http/errors.ts';
import { filterLimit, INT4_MAX } from '../http/validation.ts';
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
  /** Deleting needs a recent step-up verification from a user with two-factor sign-in. */
  sensitiveDelete?: boolean;
  /** Whether this update needs a recent step-up verification (e.g. it changes another user's quota). */
  sensitiveUpdate?(id: number, data: Record<string, unknown>, actor: UserRow): Promise<boolean>;
}

/** The `id` filter of getMany: a list of ids (or one id); what cannot be an id (past int4) matches nothing. */
export function idsFilter(filters: RestFilters | undefined): number[] | undefined {
  const raw = filters?.id;
  if (raw === undefined) return undefined;
  return (Array.isArray(raw) ? raw : [raw])
    .map(Number)
    .filter((id) => Number.isInteger(id) && Math.abs(id) <= INT4_MAX);
}

export function textFilter(filters: RestFilters | undefined, key: string): string | undefined {
  const value = filters?.[key];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/**
 * A whole-number filter; no number at all means no filter. A fraction, or a number past the range of the
 * column it is compared with (int4, or ±2^53 for times and amounts), is refused: Postgres would fail on it.
 */
export function numberFilter(filters: RestFilters | undefined, key: string): number | undefined {
  const value = filters?.[key];
  const n = typeof value === 'number' ? value : typeof value === 'string' && value !== '' ? Number(value) : Number.NaN;
  if (Number.isNaN(n)) return undefined;
  if (!Number.isFinite(n) || Math.abs(n) > filterLimit(key)) {
    throw new AppError(HTTP_ERRORS.NUMBER_OUT_OF_RANGE, { detail: `filter.${key}` });
  }
  if (!Number.isInteger(n))
    throw new AppError(HTTP_ERRORS.INVALID_REQUEST, { detail: `filter.${key} must be an integer` });
  return n;
}
