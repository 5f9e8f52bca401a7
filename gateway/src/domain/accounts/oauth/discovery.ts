import { AppError } from '../../../errors.ts';
import type { OutboundGuard } from '../../../http/outbound/guard.ts';
import { CUSTOM_OAUTH_ERRORS } from './errors.ts';
import { asObject } from './http.ts';

/** A discovery document is a few kilobytes; anything this big is not one. */
const MAX_DOCUMENT_BYTES = 1024 * 1024;

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
 * form: the given discovery URL, else {issuer}/.well-known/openid-configuration. The URL comes from a
 * person, so the request goes through the outbound guard (fetch_setting.*: no private addresses unless
 * allowed), bounded in time and size; every failure is a stable code with a short reason, never a 5xx.
 */
export async function fetchDiscovery(
  outbound: OutboundGuard,
  request: DiscoveryRequest,
  timeoutMs: number,
): Promise<DiscoveryResult> {
  const wellKnown = request.well_known_url?.trim() ?? '';
  const issuer = request.issuer_url?.trim() ?? '';
  const target = wellKnown || (issuer ? `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration` : '');
  if (!isHttpUrl(target)) throw new AppError(CUSTOM_OAUTH_ERRORS.CUSTOM_OAUTH_DISCOVERY_URL_INVALID);
  const failed = (reason: string) => new AppError(CUSTOM_OAUTH_ERRORS.CUSTOM_OAUTH_DISCOVERY_FAILED, { reason });
  const signal = AbortSignal.timeout(timeoutMs);
  let text: string;
  try {
    const response = await outbound.send({
      url: target,
      signal,
      headers: { accept: 'application/json' },
      maxRedirects: 3,
    });
    if (response.status !== 200) {
      await response.body.dump();
      throw failed(`HTTP ${response.status}`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response.body) {
      size += chunk.length;
      if (size > MAX_DOCUMENT_BYTES) throw failed('answer too large');
      chunks.push(chunk);
    }
    text = Buffer.concat(chunks).toString('utf8');
  } catch (error) {
    // Ours, and the guard's refusal of the URL (OUTBOUND_URL_REFUSED), keep their codes.
    if (error instanceof AppError) throw error;
    throw failed(signal.aborted ? 'timed out' : 'unreachable');
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
