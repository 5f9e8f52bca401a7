import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const SAFE_ID = /^[\w.:-]{1,128}$/;

/** Keeps a caller's (or ingress's) X-Request-Id when it is safe to log, else makes one. */
export function requestId(request: IncomingMessage): string {
  const incoming = request.headers['x-request-id'];
  if (typeof incoming === 'string' && SAFE_ID.test(incoming)) return incoming;
  // A UUID's random bits come from a pooled buffer: cheaper than fresh random bytes per request.
  return randomUUID().replaceAll('-', '');
}
