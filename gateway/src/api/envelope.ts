import type { FastifyRequest } from 'fastify';
import type { AppError, Language } from '../errors.ts';
import { requestLanguage } from '../http/errors.ts';

/** new-api's answer shape on every /api call: {success, message, data}; failures add a stable `code`. */
export interface Envelope<T = unknown> {
  success: boolean;
  message: string;
  data?: T;
  code?: string;
}

export function ok<T>(data?: T, message = ''): Envelope<T> {
  return data === undefined ? { success: true, message } : { success: true, message, data };
}

/** A success message in the caller's language. */
export function say(request: FastifyRequest, message: Record<Language, string>): string {
  return message[requestLanguage(request)];
}

export function failure(request: FastifyRequest, error: AppError): Envelope<never> {
  return { success: false, message: error.localized(requestLanguage(request)), code: error.code };
}
