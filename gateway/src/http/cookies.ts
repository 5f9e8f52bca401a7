import { parseCookie } from 'cookie';
import type { FastifyRequest } from 'fastify';

/**
 * One cookie of a request, parsed when a route asks for it: only the routes that read a session (the
 * console's /api and /rest, the playground, a video's content) parse the Cookie header; relay requests,
 * which authenticate by key, never do.
 */
export function requestCookie(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  return header ? parseCookie(header)[name] : undefined;
}
