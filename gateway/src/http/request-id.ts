import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const SAFE_ID = /^[\w.:-]{1,128}$/;

/** Keeps a caller's (or ingress's) X-Request-Id when it is safe to log, else makes one. */
export function requestId(request: IncomingMessage): string {
  const incoming = request.headers['x-request-id'];
  if (typeof incoming === 'string' && SAFE_ID.test(incoming)) return incoming;
  return newRequestId();
}

/** Ids made from one draw of random bytes. */
const IDS_PER_DRAW = 256;
let pool = Buffer.alloc(0);
let offset = 0;

/**
 * A random version 4 UUID as 32 hex digits (what randomUUID() without its dashes was), cut from a
 * pool of random bytes: a third of the cost of making the UUID string and then removing its dashes.
 */
export function newRequestId(): string {
  if (offset >= pool.length) {
    pool = randomBytes(16 * IDS_PER_DRAW);
    offset = 0;
  }
  // The version (4) and variant (10xx) bits, as RFC 9562 sets them.
  pool[offset + 6] = ((pool[offset + 6] as number) & 0x0f) | 0x40;
  pool[offset + 8] = ((pool[offset + 8] as number) & 0x3f) | 0x80;
  const id = pool.toString('hex', offset, offset + 16);
  offset += 16;
  return id;
}
