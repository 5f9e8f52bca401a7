import type { Json } from '../convert/types.ts';
import { parsedData, type SseEvent } from '../sse.ts';

/** Reading the JSON upstreams send: objects, stream events and token counts. */

export const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** An event's JSON data (parsed once per event); undefined when it is not a JSON object. */
export function eventJson(event: SseEvent): Json | undefined {
  const value = parsedData(event);
  return isObject(value) ? value : undefined;
}

/** A count an upstream reported; 0 for anything that is not a finite, non-negative number. */
export const num = (value: unknown): number =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;
