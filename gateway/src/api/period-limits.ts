import { PERIOD_LIMIT_FIELDS } from '../domain/ledger/periods/limits.ts';

/** The body fields of a token's or user's daily, weekly and monthly limits (0 = no limit). */
export const periodLimitSchema = Object.fromEntries(
  PERIOD_LIMIT_FIELDS.map((field) => [
    field,
    {
      type: 'integer',
      minimum: 0,
      description: field.includes('_quota_')
        ? `Quota units per ${field.split('_')[0]} period (calendar, in quota_setting.period_timezone); 0 = no limit`
        : `Requests per ${field.split('_')[0]} period (calendar, in quota_setting.period_timezone); 0 = no limit`,
    },
  ]),
);
