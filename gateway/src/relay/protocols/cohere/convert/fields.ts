import type { Json } from '../../../convert/types.ts';

/** Readers for untrusted JSON (a hub request from any client, an upstream answer). */
export const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export const asArray = (value: unknown): any[] => (Array.isArray(value) ? value : []);

export const asString = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

export const asNumber = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;

/** Copies `value` into `target[key]` unless it is undefined or null. */
export function put(target: Json, key: string, value: unknown): void {
  if (value !== undefined && value !== null) target[key] = value;
}
