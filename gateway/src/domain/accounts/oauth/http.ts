import { AppError } from '../../../errors.ts';
import { OAUTH_ERRORS } from './errors.ts';

/** Providers answer a few hundred bytes; anything this big is not an answer worth reading. */
const MAX_BODY_BYTES = 1024 * 1024;

export interface ProviderAnswer {
  status: number;
  /** The parsed JSON body, or undefined when the body is not JSON. */
  json: unknown;
}

/**
 * One call to a provider, bounded in time and size. Unreachable, timed out or failing (5xx, 429)
 * providers become OAUTH_PROVIDER_UNAVAILABLE; every other answer is handed back for the caller to judge.
 * `reason` params are for the server log only (messages never show them) and never hold credentials.
 */
export async function callProvider(
  label: string,
  url: string,
  init: RequestInit,
  timeoutMs: number,
): Promise<ProviderAnswer> {
  const where = `${init.method ?? 'GET'} ${safeUrl(url)}`;
  const unavailable = (reason: string) =>
    new AppError(OAUTH_ERRORS.OAUTH_PROVIDER_UNAVAILABLE, { provider: label, reason: `${where}: ${reason}` });
  let response: Response;
  let text: string;
  try {
    // The signal also bounds reading the body: a provider that stalls mid-answer is cut off too.
    response = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    if (response.status >= 500 || response.status === 429) {
      await response.body?.cancel().catch(() => {});
      throw unavailable(`HTTP ${response.status}`);
    }
    text = await readLimited(response);
  } catch (error) {
    if (error instanceof AppError) throw error;
    if (error instanceof TooLarge) throw badResponse(label, `${where}: answer over ${MAX_BODY_BYTES} bytes`);
    throw unavailable(error instanceof Error && error.name === 'TimeoutError' ? 'timed out' : 'unreachable');
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, json };
}

/** Provider errors meaning "your client id or secret is wrong", not "the user's code is bad". */
const CLIENT_ERRORS = new Set(['invalid_client', 'unauthorized_client', 'incorrect_client_credentials']);

/** The access token from an OAuth 2 token endpoint answer (RFC 6749 §5; GitHub answers errors with 200). */
export function accessTokenFrom(label: string, answer: ProviderAnswer): string {
  const body = asObject(answer.json);
  const error = typeof body?.error === 'string' ? body.error : undefined;
  if ((error !== undefined && CLIENT_ERRORS.has(error)) || (error === undefined && answer.status === 401)) {
    throw new AppError(OAUTH_ERRORS.OAUTH_CLIENT_REJECTED, { provider: label, reason: error ?? 'HTTP 401' });
  }
  if (error !== undefined || answer.status >= 400) {
    throw new AppError(OAUTH_ERRORS.OAUTH_CODE_REJECTED, { provider: label, reason: error ?? `HTTP ${answer.status}` });
  }
  const token = body?.access_token;
  if (typeof token !== 'string' || token === '') throw badResponse(label, 'token answer without access_token');
  return token;
}

/** A user-info answer as an object; a refusal of the token we were just given is the provider's fault. */
export function profileFrom(label: string, answer: ProviderAnswer): Record<string, unknown> {
  if (answer.status >= 400) throw badResponse(label, `user endpoint answered HTTP ${answer.status}`);
  const body = asObject(answer.json);
  if (!body) throw badResponse(label, 'user endpoint did not answer a JSON object');
  return body;
}

export function badResponse(label: string, reason: string): AppError {
  return new AppError(OAUTH_ERRORS.OAUTH_PROVIDER_BAD_RESPONSE, { provider: label, reason });
}

export function asObject(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** A string claim, trimmed; undefined when absent, empty or not a string. */
export function optionalText(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** A numeric account id (GitHub, LinuxDO) as the text stored in the user column. */
export function numericId(label: string, value: unknown): string {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) return String(value);
  throw badResponse(label, 'user answer without a numeric id');
}

/** Origin and path only: query strings may carry one-time codes. */
function safeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}

class TooLarge extends Error {}

async function readLimited(response: Response): Promise<string> {
  if (!response.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    size += chunk.byteLength;
    if (size > MAX_BODY_BYTES) {
      await response.body.cancel().catch(() => {});
      throw new TooLarge();
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
