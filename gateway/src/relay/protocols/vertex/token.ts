import { createSign } from 'node:crypto';
import type { ServiceAccount } from '../../../domain/channels/service-account.ts';
import type { Transport } from '../../transport.ts';

export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** Google's access tokens live an hour; the assertion asks for that much. */
const ASSERTION_LIFETIME_S = 3600;
/** A token is replaced this long before it expires, so no request goes out with one about to lapse. */
const REFRESH_MARGIN_MS = 5 * 60_000;
const TOKEN_TIMEOUT_MS = 30_000;

const base64url = (data: string | Buffer) => Buffer.from(data).toString('base64url');

/**
 * The signed JWT a service account trades for an access token (Google's OAuth 2.0 for
 * server-to-server applications): RS256 over `header.claims`, the key named by `kid`.
 */
export function signAssertion(account: ServiceAccount, nowSeconds: number): string {
  const header = { alg: 'RS256', typ: 'JWT', kid: account.private_key_id };
  const claims = {
    iss: account.client_email,
    scope: CLOUD_PLATFORM_SCOPE,
    aud: account.token_uri,
    iat: nowSeconds,
    exp: nowSeconds + ASSERTION_LIFETIME_S,
  };
  const input = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
  const signature = createSign('RSA-SHA256').update(input).sign(account.private_key);
  return `${input}.${base64url(signature)}`;
}

/** The token endpoint said no (a key revoked, an account deleted, a clock far off): the reason it gave. */
export class TokenRefused extends Error {
  override name = 'TokenRefused';
  readonly status: number;
  constructor(status: number, reason: string) {
    super(reason);
    this.status = status;
  }
}

interface CachedToken {
  token: string;
  /** When to fetch a new one (epoch ms): the expiry less the margin. */
  refreshAt: number;
}

/**
 * Access tokens per service account, fetched through the relay's pooled transport, kept until five
 * minutes before they expire; requests arriving while one is being fetched wait for that same fetch.
 */
export class AccessTokens {
  readonly #tokens = new Map<string, CachedToken>();
  readonly #pending = new Map<string, Promise<CachedToken>>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  async token(account: ServiceAccount, transport: Pick<Transport, 'send'>): Promise<string> {
    const id = `${account.token_uri}\n${account.client_email}\n${account.private_key_id}`;
    const cached = this.#tokens.get(id);
    if (cached && this.#now() < cached.refreshAt) return cached.token;
    let pending = this.#pending.get(id);
    if (!pending) {
      pending = this.#fetch(account, transport).finally(() => this.#pending.delete(id));
      this.#pending.set(id, pending);
    }
    const fresh = await pending;
    this.#tokens.set(id, fresh);
    return fresh.token;
  }

  async #fetch(account: ServiceAccount, transport: Pick<Transport, 'send'>): Promise<CachedToken> {
    const started = this.#now();
    const assertion = signAssertion(account, Math.floor(started / 1000));
    let response: Awaited<ReturnType<Transport['send']>>;
    let text: string;
    try {
      response = await transport.send(
        {
          url: account.token_uri,
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ grant_type: JWT_BEARER, assertion }).toString(),
        },
        AbortSignal.timeout(TOKEN_TIMEOUT_MS),
      );
      text = await response.body.text();
    } catch (error) {
      // Said so, or the relay would report the API host as the one it could not reach.
      const reason = error instanceof Error ? error.message : String(error);
      throw new Error(`the token endpoint ${account.token_uri} could not be reached: ${reason}`, { cause: error });
    }
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      // Not JSON: reported below with the raw text.
    }
    if (response.status >= 400 || typeof body.access_token !== 'string') {
      // OAuth's error body: {"error": "invalid_grant", "error_description": "Invalid JWT Signature."}
      const reason =
        typeof body.error === 'string'
          ? `${body.error}${typeof body.error_description === 'string' ? `: ${body.error_description}` : ''}`
          : text.slice(0, 300) || `HTTP ${response.status}`;
      throw new TokenRefused(response.status, reason);
    }
    const lifetimeMs = (typeof body.expires_in === 'number' ? body.expires_in : ASSERTION_LIFETIME_S) * 1000;
    return { token: body.access_token, refreshAt: started + lifetimeMs - REFRESH_MARGIN_MS };
  }
}
