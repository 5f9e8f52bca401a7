/**
 * Daily, weekly and monthly limits of a token or user (the gateway's `*_quota_limit` and
 * `*_request_limit` fields, 0 = no limit) and the current periods' use it answers as `period_usage`.
 */
export const PERIOD_KINDS = ['daily', 'weekly', 'monthly'] as const;
export type PeriodKind = (typeof PERIOD_KINDS)[number];

export type PeriodLimitField = `${PeriodKind}_${'quota' | 'request'}_limit`;

export const PERIOD_LIMIT_FIELDS: PeriodLimitField[] = PERIOD_KINDS.flatMap((kind) => [
  `${kind}_quota_limit` as const,
  `${kind}_request_limit` as const,
]);

/** One current period as the gateway reports it. */
export interface PeriodUsageView {
  period: string;
  used_quota: number;
  used_requests: number;
  quota_limit: number;
  request_limit: number;
  remain_quota: number | null;
  remain_requests: number | null;
  /** Unix seconds. */
  resets_at: number;
}

export type PeriodUsage = Partial<Record<PeriodKind, PeriodUsageView>>;

/** A record carrying the limits (and, as listed, its current use). */
export type WithPeriodLimits = Partial<Record<PeriodLimitField, number>> & { period_usage?: PeriodUsage };

/** The limits as form text (a field the record lacks shows 0). */
export function periodLimitValues(record: WithPeriodLimits): Record<PeriodLimitField, string> {
  return Object.fromEntries(PERIOD_LIMIT_FIELDS.map((field) => [field, String(record[field] ?? 0)])) as Record<
    PeriodLimitField,
    string
  >;
}

const isLimit = (value: unknown) => /^\d+$/.test(String(value ?? '').trim());

/** The fields that are not an integer ≥ 0 (empty counts as 0). */
export function invalidPeriodLimits(values: Partial<Record<PeriodLimitField, unknown>>): PeriodLimitField[] {
  return PERIOD_LIMIT_FIELDS.filter((field) => {
    const value = values[field];
    return value !== undefined && value !== null && value !== '' && !isLimit(value);
  });
}

/** The limits for the gateway's body: integers, 0 where empty. */
export function periodLimitBody(values: Partial<Record<PeriodLimitField, unknown>>): Record<PeriodLimitField, number> {
  return Object.fromEntries(
    PERIOD_LIMIT_FIELDS.map((field) => {
      const value = values[field];
      return [field, isLimit(value) ? Number(String(value).trim()) : 0];
    }),
  ) as Record<PeriodLimitField, number>;
}
