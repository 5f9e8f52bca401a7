/**
 * The nesting depth of a JSON body, checked on its bytes before it is parsed: a 5,000-deep body overflowed
 * the stack of the recursive walks after parsing (a 5xx). One pass, with strings skipped by the native
 * search for their closing quote, so that large string payloads (base64 images) cost next to nothing.
 */
import type { FastifyInstance } from 'fastify';
import { AppError } from '../../errors.ts';
import { BOUND_ERRORS } from './errors.ts';

/** Deepest nesting of objects and arrays a relay body may have (real requests stay under 20). */
export const MAX_JSON_DEPTH = 128;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPENERS = new Set([0x7b, 0x5b]);
const CLOSERS = new Set([0x7d, 0x5d]);

/** Throws `body_too_deep` when `bytes` (JSON text) nests objects and arrays deeper than `limit`. */
export function assertJsonDepth(bytes: Uint8Array, limit = MAX_JSON_DEPTH): void {
  const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let depth = 0;
  for (let i = 0; i < buffer.length; i++) {
    const byte = buffer[i]!;
    if (byte === QUOTE) {
      i = closingQuote(buffer, i + 1);
    } else if (OPENERS.has(byte)) {
      if (++depth > limit) throw new AppError(BOUND_ERRORS.body_too_deep, { limit });
    } else if (CLOSERS.has(byte)) {
      depth--;
    }
  }
}

/** The index of the quote that closes a string opened before `from` (the end when none: the parser then refuses). */
function closingQuote(buffer: Buffer, from: number): number {
  for (let at = buffer.indexOf(QUOTE, from); at >= 0; at = buffer.indexOf(QUOTE, at + 1)) {
    // Escaped when an odd number of backslashes comes before it.
    let backslashes = 0;
    while (buffer[at - 1 - backslashes] === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
  return buffer.length;
}

/** Makes `app` (a plugin's scope) parse JSON bodies as Fastify does, after checking their depth. */
export function parseJsonWithinDepth(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    try {
      assertJsonDepth(body as Buffer);
    } catch (error) {
      return done(error as Error);
    }
    parseJson(request, (body as Buffer).toString('utf8'), done);
  });
}
