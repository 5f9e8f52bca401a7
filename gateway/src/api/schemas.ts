/** Schema pieces the /api routes share, so each field is described the same way everywhere. */

export const text = (description: string, maxLength = 4096) => ({ type: 'string', maxLength, description }) as const;

/** Requests and tokens per minute of a token or user (domain/rate-limits.ts). */
export const rateLimitsSchema = {
  type: 'object',
  maxProperties: 256,
  description:
    'Requests and tokens per minute: model name or "*" (every other model) -> { rpm, tpm }, whole numbers, 0 or absent for no limit; {} for none',
  additionalProperties: {
    type: 'object',
    additionalProperties: false,
    properties: { rpm: { type: 'integer', minimum: 0 }, tpm: { type: 'integer', minimum: 0 } },
  },
} as const;

/** Path parameters of one record, e.g. `/token/:id`. */
export const idParams = (description: string) =>
  ({
    type: 'object',
    required: ['id'],
    properties: { id: { type: 'integer', minimum: 1, description } },
  }) as const;

/** new-api's `?status_only=true`: the PUT changes only the record's status. */
export const statusOnlyQuery = {
  type: 'object',
  properties: { status_only: text('When set (e.g. true), only the status changes', 16) },
} as const;

export const isStatusOnly = (query: { status_only?: string | undefined }) =>
  !['', 'false', '0', undefined].includes(query.status_only);
