import { AppError } from '../../../errors.ts';
import { CUSTOM_OAUTH_ERRORS } from './errors.ts';
import { asObject, readLimited, TooLarge } from './http.ts';

export interface DiscoveryRequest {
  well_known_url?: string | undefined;
  issuer_url?: string | undefined;
}

export interface DiscoveryResult {
  well_known_url: string;
  /** The provider's OpenID configuration as it answered it (a JSON object). */
  discovery: Record<string, unknown>;
}

/**
 * Reads an OpenID Provider's configuration document (OpenID Connect Discovery 1.0 §4) for the settings
 * form: the given discovery URL, else {issuer}/.well-known/openid-configuration. Root-only, bounded in time
 * and size; every failure is a stable code with a short reason, never a 5xx.
 */
export async function fetchDiscovery(request: DiscoveryRequest, timeoutMs: number): Promise<DiscoveryResult> {
  const wellKnown = request.well_known_url?.trim() ?? '';
  const issuer = request.issuer_url?.trim() ?? '';
  const target = wellKnown || (issuer ? `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration` : '');
  if (!isHttpUrl(target)) throw new AppError(CUSTOM_OAUTH_ERRORS.CUSTOM_OAUTH_DISCOVERY_URL_INVALID);
  const failed = (reason: string) => new AppError(CUSTOM_OAUTH_ERRORS.CUSTOM_OAUTH_DISCOVERY_FAILED, { reason });
  let text: string;
  try {
    const response = await fetch(target, {
      headers: { accept: 'application/json' },
      redirect: 'follow',
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => {});
      throw failed(`HTTP ${response.status}`);
    }
    text = await readLimited(response);
  } catch (error) {
    if (error instanceof AppError) throw error;
    if (error instanceof TooLarge) throw failed('answer too large');
    throw failed(error instanceof Error && error.name === 'TimeoutError' ? 'timed out' : 'unreachable');
  }
  let document: Record<string, unknown> | undefined;
  try {
    document = asObject(JSON.parse(text));
  } catch {
    document = undefined;
  }
  if (!document) throw failed('not a JSON object');
  return { well_known_url: target, discovery: document };
}

export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}
