/** Schema pieces the /api routes share, so each field is described the same way everywhere. */

export const text = (description: string, maxLength = 4096) => ({ type: 'string', maxLength, description }) as const;

/** Path parameters of one record, e.g. `/token/:id`. */
export const idParams = (description: string) =>
  ({
    type: 'object',
    required: ['id'],
    properties: { id: { type: 'integer', minimum: 1, description } },
  }) as const;
