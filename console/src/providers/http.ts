import { currentLanguage } from '../i18n/index.ts';
import { clearStoredUser, getStoredUser } from './session.ts';

/** The answer of every /api call (spec doc 1 §1): success, message, data; failures add a stable code. */
export interface Envelope<T = unknown> {
  success: boolean;
  message: string;
  data?: T;
  code?: string;
}

/**
 * A failed call. `message` is what to show: the server's message (already in the user's language), or
 * one of the generic `http.*` keys of spec doc 1 §8 for 429, 500 and 405 (react-admin's `notify` and
 * `translate` resolve keys and show other text as it is).
 */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string | undefined;
  readonly body: unknown;

  constructor(message: string, status: number, code?: string, body?: unknown) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.body = body;
  }
}

/** The generic message for an HTTP status (spec doc 1 §8), or undefined: then the error's own message. */
export function genericHttpMessage(status: number): string | undefined {
  switch (status) {
    case 429:
      return 'http.too_many_requests';
    case 500:
      return 'http.server_error';
    case 405:
      return 'http.demo_only';
    default:
      return undefined;
  }
}

/** Headers of every call to the gateway (spec doc 1 §1): the user id, no caching, the UI language. */
export function gatewayHeaders(init?: HeadersInit): Headers {
  const headers = new Headers(init);
  const user = getStoredUser();
  if (user) headers.set('New-Api-User', String(user.id));
  headers.set('Cache-Control', 'no-store');
  headers.set('Accept-Language', currentLanguage());
  return headers;
}

export const EXPIRED_LOGIN_PATH = '/login?expired=true';

let unauthorized: () => void = () => window.location.assign(EXPIRED_LOGIN_PATH);

/** What a 401 does (spec doc 1 §4): the shell registers a router navigation; before that, a page load. */
export function setUnauthorizedHandler(handler: () => void): void {
  unauthorized = handler;
}

/** A 401 anywhere: forget the user and go to /login?expired=true. */
export function sessionExpired(): void {
  clearStoredUser(true);
  unauthorized();
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** Set to false where a 401 means something else (sign-in with a wrong password). Default true. */
  expireOn401?: boolean;
  signal?: AbortSignal;
}

async function request<T>(method: string, path: string, options: RequestOptions = {}): Promise<Envelope<T>> {
  const url = new URL(path, window.location.origin);
  for (const [key, value] of Object.entries(options.query ?? {})) {
    if (value !== undefined) url.searchParams.set(key, String(value));
  }
  const headers = gatewayHeaders({ Accept: 'application/json' });
  let body: string | undefined;
  if (options.body !== undefined) {
    headers.set('Content-Type', 'application/json');
    body = JSON.stringify(options.body);
  }
  const response = await fetch(url, {
    method,
    headers,
    body,
    credentials: 'include',
    cache: 'no-store',
    signal: options.signal,
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  const envelope = isEnvelope(json) ? (json as Envelope<T>) : undefined;
  if (!response.ok) {
    if (response.status === 401 && options.expireOn401 !== false) sessionExpired();
    const message =
      genericHttpMessage(response.status) ?? envelope?.message ?? (response.statusText || `HTTP ${response.status}`);
    throw new ApiError(message, response.status, envelope?.code, json);
  }
  if (!envelope) throw new ApiError(`Unexpected answer from ${url.pathname}`, response.status, undefined, text);
  if (!envelope.success) throw new ApiError(envelope.message, response.status, envelope.code, json);
  return envelope;
}

function isEnvelope(value: unknown): boolean {
  return typeof value === 'object' && value !== null && 'success' in value;
}

/**
 * Calls to the gateway's /api (new-api shapes). The short forms answer `data` and throw an ApiError
 * when success is false; `request` answers the whole envelope (for the server's success message).
 */
export const api = {
  request,
  get: <T>(path: string, options?: RequestOptions) => request<T>('GET', path, options).then((e) => e.data as T),
  post: <T>(path: string, body?: unknown, options?: RequestOptions) =>
    request<T>('POST', path, { ...options, body }).then((e) => e.data as T),
  put: <T>(path: string, body?: unknown, options?: RequestOptions) =>
    request<T>('PUT', path, { ...options, body }).then((e) => e.data as T),
  delete: <T>(path: string, options?: RequestOptions) => request<T>('DELETE', path, options).then((e) => e.data as T),
};

/** The text to show for any error: an ApiError's message or key, else the error's own message. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
