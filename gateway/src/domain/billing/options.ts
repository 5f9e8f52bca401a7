/**
 * The options billing reads. A narrow interface, so that the real OptionsService satisfies it
 * structurally and tests can pass a plain object.
 */
export interface BillingOptions {
  get(key: string): string;
  getNumber(key: string): number;
  getBoolean(key: string): boolean;
  getJson<T = unknown>(key: string): T;
}

/** A ratio map option (`{"model": 1.5}`), or an empty one when the stored value is not an object. */
export function ratioMap(options: BillingOptions, key: string): Readonly<Record<string, number>> {
  const value = options.getJson<unknown>(key);
  return isRecord(value) ? (value as Record<string, number>) : {};
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A finite number from a map entry, or undefined (a missing or malformed entry means "unset"). */
export function numberAt(map: Readonly<Record<string, unknown>> | undefined, key: string): number | undefined {
  if (map === undefined || !Object.hasOwn(map, key)) return undefined;
  const value = map[key];
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}
