import { AppError } from '../errors.ts';
import { HTTP_ERRORS } from '../http/errors.ts';
import { checkProperties } from '../http/validation.ts';

/**
 * Reads typed fields out of a react-admin record. react-admin sends the whole record back on update,
 * so unknown fields are ignored; a known field of the wrong type is a 400, never silently coerced.
 */
export function field<T extends 'string' | 'number' | 'boolean'>(
  data: Record<string, unknown>,
  name: string,
  type: T,
): (T extends 'string' ? string : T extends 'number' ? number : boolean) | undefined {
  const value = data[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== type) {
    throw new AppError(HTTP_ERRORS.INVALID_REQUEST, { detail: `${name} must be a ${type}` });
  }
  return value as never;
}

/** The record, checked against a route's field schemas (the same ones /api validates with). */
export function typed<T>(data: Record<string, unknown>, properties: object): T {
  const problem = checkProperties(data, properties);
  if (problem) throw new AppError(HTTP_ERRORS.INVALID_REQUEST, { detail: problem });
  return data as T;
}
