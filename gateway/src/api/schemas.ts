/** Schema pieces the /api routes share, so each field is described the same way everywhere. */

export const text = (description: string, maxLength = 4096) => ({ type: 'string', maxLength, description }) as const;

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
