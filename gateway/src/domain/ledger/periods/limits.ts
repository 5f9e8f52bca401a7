import { AppError, defineErrors } from '../../../errors.ts';
import { PERIOD_KINDS, type PeriodKind } from './calendar.ts';

/** One period's limits; 0 means no limit. */
export interface PeriodLimit {
  /** Quota units per period. */
  quota: number;
  /** Requests per period. */
  requests: number;
}

/** A holder's limits by period kind; a kind that is absent has none. */
export type PeriodLimits = Partial<Record<PeriodKind, PeriodLimit>>;

/**
 * The `/api` fields of the limits, flat as new-api's own token and user fields are:
 * `daily_quota_limit`, `daily_request_limit`, `weekly_…`, `monthly_…`.
 */
export type PeriodLimitField = `${PeriodKind}_${'quota' | 'request'}_limit`;
export type PeriodLimitFields = Record<PeriodLimitField, number>;

export const PERIOD_LIMIT_FIELDS: readonly PeriodLimitField[] = PERIOD_KINDS.flatMap((kind) => [
  `${kind}_quota_limit` as const,
  `${kind}_request_limit` as const,
]);

export const PERIOD_LIMIT_ERRORS = defineErrors({
  period_limit_invalid: {
    status: 400,
    message: {
      zh: '{field} 必须是不小于 0 的整数（0 表示不限）',
      en: '{field} must be an integer of at least 0 (0 means no limit)',
    },
  },
});

/** Whether a holder has any limit at all: the relay does no period accounting for one that has none. */
export const hasPeriodLimits = (limits: PeriodLimits | undefined): limits is PeriodLimits =>
  limits !== undefined && Object.keys(limits).length > 0;

/** The stored JSON (`tokens.period_limits`, `users.period_limits`) as limits; '' or anything unreadable: none. */
export function parsePeriodLimits(text: string): PeriodLimits {
  if (!text) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return {};
  }
  const limits: PeriodLimits = {};
  if (typeof value !== 'object' || value === null) return limits;
  for (const kind of PERIOD_KINDS) {
    const entry = (value as Record<string, unknown>)[kind] as Partial<PeriodLimit> | undefined;
    const quota = positive(entry?.quota);
    const requests = positive(entry?.requests);
    if (quota > 0 || requests > 0) limits[kind] = { quota, requests };
  }
  return limits;
}

const positive = (n: unknown) => (typeof n === 'number' && Number.isSafeInteger(n) && n > 0 ? n : 0);

/** Limits as stored: '' when there are none, so a holder without limits costs the relay nothing. */
export function serializePeriodLimits(limits: PeriodLimits): string {
  return hasPeriodLimits(limits) ? JSON.stringify(limits) : '';
}

/** The flat `/api` fields of stored limits (0 where there is none). */
export function periodLimitFields(limits: PeriodLimits): PeriodLimitFields {
  const fields = {} as PeriodLimitFields;
  for (const kind of PERIOD_KINDS) {
    fields[`${kind}_quota_limit`] = limits[kind]?.quota ?? 0;
    fields[`${kind}_request_limit`] = limits[kind]?.requests ?? 0;
  }
  return fields;
}

/**
 * Limits after an update with some of the flat fields (absent ones keep their value), or undefined
 * when the input names none. Each must be an integer ≥ 0.
 */
export function applyPeriodLimitFields(
  current: PeriodLimits,
  input: Partial<Record<PeriodLimitField, unknown>>,
): PeriodLimits | undefined {
  if (!PERIOD_LIMIT_FIELDS.some((field) => input[field] !== undefined)) return undefined;
  const fields = periodLimitFields(current);
  for (const field of PERIOD_LIMIT_FIELDS) {
    const value = input[field];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
      throw new AppError(PERIOD_LIMIT_ERRORS.period_limit_invalid, { field });
    }
    fields[field] = value;
  }
  const limits: PeriodLimits = {};
  for (const kind of PERIOD_KINDS) {
    const quota = fields[`${kind}_quota_limit`];
    const requests = fields[`${kind}_request_limit`];
    if (quota > 0 || requests > 0) limits[kind] = { quota, requests };
  }
  return limits;
}
