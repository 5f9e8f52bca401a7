import type { FastifyReply, FastifyRequest } from 'fastify';
import { failure } from '../api/envelope.ts';
import { AppError, type ErrorSpec } from '../errors.ts';
import { openAIError } from '../relay/openai-error.ts';
import { requestLanguage } from './errors.ts';

/** Paths whose errors OpenAI-style clients parse (the relay's). */
export function isOpenAIPath(path: string): boolean {
  return path === '/v1' || path.startsWith('/v1/') || path.startsWith('/v1beta');
}

/**
 * A 503 the caller should retry elsewhere or later (draining, schema not ready), in the caller's error
 * shape: OpenAI's for relay paths, the /api envelope for the rest. The connection is closed after it.
 */
export function sendUnavailable(request: FastifyRequest, reply: FastifyReply, spec: ErrorSpec) {
  const error = new AppError(spec);
  const path = request.url.split('?')[0] ?? '';
  reply.code(503).header('connection', 'close');
  if (isOpenAIPath(path)) {
    return reply.send(openAIError(error.localized(requestLanguage(request)), 'server_error', spec.code.toLowerCase()));
  }
  return reply.send(failure(request, error));
}
