import type { Json } from '../../../convert/types.ts';

/**
 * Readers for untrusted Gemini JSON. Google's REST surface accepts every field in lowerCamelCase
 * and in snake_case (its own curl samples send `system_instruction`, `inline_data`), so a field is
 * looked up under both spellings.
 */
export function field(object: unknown, camel: string): unknown {
  if (!isObject(object)) return undefined;
  const value = object[camel];
  if (value !== undefined) return value;
  return object[camel.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)];
}

export const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export const asObject = (value: unknown): Json | undefined => (isObject(value) ? value : undefined);

export const asArray = (value: unknown): any[] => (Array.isArray(value) ? value : []);

export const asString = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

export const asNumber = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;

/** A count that may arrive as a number or (int64 in proto JSON) a numeric string. */
export function count(value: unknown): number {
  const parsed = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof parsed === 'number' && Number.isFinite(parsed) && parsed > 0 ? parsed : 0;
}

/** Copies `value` into `target[key]` unless it is undefined. */
export function put(target: Json, key: string, value: unknown): void {
  if (value !== undefined) target[key] = value;
}

/** The id the hub gives the n-th function call of a Gemini conversation (Gemini has none). */
export const callId = (n: number) => `call_${n}`;

/**
 * The id the hub gives the n-th function call of one Gemini answer: derived from the answer's
 * responseId (stable for that answer) so that calls of different turns never share an id.
 */
export function answerCallId(responseId: unknown, n: number): string {
  const tag = typeof responseId === 'string' ? responseId.replace(/[^A-Za-z0-9_-]/g, '') : '';
  return `call_${tag || randomId()}_${n}`;
}

/** Parses a tool call's arguments; Gemini wants an object, so anything else is wrapped. */
export function parseArguments(text: unknown): Json {
  if (isObject(text)) return text;
  if (typeof text !== 'string' || text.trim() === '') return {};
  try {
    const parsed = JSON.parse(text);
    return isObject(parsed) ? parsed : { value: parsed };
  } catch {
    return { value: text };
  }
}

/** A data: URL split into its media type and base64 payload; undefined for any other URL. */
export function parseDataUrl(url: string): { mimeType: string; data: string } | undefined {
  const match = /^data:([^;,]*)((?:;[^;,]*)*),(.*)$/s.exec(url);
  if (!match) return undefined;
  const [, mimeType = '', params = '', payload = ''] = match;
  const base64 = params.split(';').includes('base64');
  return {
    mimeType: mimeType || 'application/octet-stream',
    data: base64 ? payload : Buffer.from(decodeURIComponent(payload)).toString('base64'),
  };
}

const MIME_BY_EXTENSION: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  heic: 'image/heic',
  heif: 'image/heif',
  pdf: 'application/pdf',
  mp3: 'audio/mp3',
  wav: 'audio/wav',
  mp4: 'video/mp4',
};

/** A media type guessed from a URL's file extension, for Gemini's fileData (which asks for one). */
export function mimeFromUrl(url: string): string | undefined {
  let path = url;
  try {
    path = new URL(url).pathname;
  } catch {
    // Not an absolute URL: read the extension off the text.
  }
  const extension = /\.([a-z0-9]+)$/i.exec(path)?.[1]?.toLowerCase();
  return extension ? MIME_BY_EXTENSION[extension] : undefined;
}

/** Seconds since the epoch, as OpenAI's `created`. */
export const nowSeconds = () => Math.floor(Date.now() / 1000);

/** A random id suffix for answers that carry no id of their own. */
export const randomId = () => crypto.randomUUID().replaceAll('-', '').slice(0, 24);
