import type { Transport } from '../../transport.ts';
import type { BaiduKey } from './key.ts';

/** The longest wait for the token endpoint. */
const FETCH_TIMEOUT_MS = 30_000;

/** A token is renewed this long before Baidu says it expires (they live 30 days), at most halfway through. */
const RENEW_BEFORE_MS = 10 * 60 * 1000;

export type TokenResult = { token: string } | { refused: { status: number; text: string } };

interface Entry {
  result: Promise<TokenResult>;
  /** The token once fetched. */
  token?: string;
  /** When the token must be renewed; Infinity while its fetch is in flight. */
  renewAt: number;
}

/**
 * Baidu OAuth access tokens (`client_credentials` for the key's API key and secret), cached per
 * token host and key until shortly before they expire. Requests that need one at the same time
 * share one fetch; a refusal is not cached, so a corrected key works on the next request.
 */
export class BaiduTokens {
  readonly #entries = new Map<string, Entry>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** The key's token; `signal` ends this caller's wait only, not a fetch other requests share. */
  async get(host: string, key: BaiduKey, transport: Transport, signal: AbortSignal): Promise<TokenResult> {
    signal.throwIfAborted();
    const aborted = new Promise<never>((_, reject) =>
      signal.addEventListener('abort', () => reject(signal.reason), { once: true }),
    );
    aborted.catch(() => {});
    return Promise.race([this.#shared(host, key, transport), aborted]);
  }

  #shared(host: string, key: BaiduKey, transport: Transport): Promise<TokenResult> {
    const id = entryId(host, key);
    const cached = this.#entries.get(id);
    if (cached && cached.renewAt > this.#now()) return cached.result;
    const entry: Entry = { renewAt: Number.POSITIVE_INFINITY, result: Promise.resolve({ token: '' }) };
    entry.result = fetchToken(host, key, transport, AbortSignal.timeout(FETCH_TIMEOUT_MS)).then(
      (result) => {
        if ('refused' in result) {
          this.#forget(id, entry);
          return result;
        }
        entry.token = result.token;
        entry.renewAt = this.#now() + result.lifetimeMs - Math.min(RENEW_BEFORE_MS, result.lifetimeMs / 2);
        return { token: result.token };
      },
      (error: unknown) => {
        this.#forget(id, entry);
        throw error;
      },
    );
    this.#entries.set(id, entry);
    return entry.result;
  }

  /** Drops a token Baidu called invalid or expired (error 110/111), so the next get fetches anew. */
  forget(host: string, key: BaiduKey, token: string): void {
    const id = entryId(host, key);
    const entry = this.#entries.get(id);
    if (entry?.token === token) this.#forget(id, entry);
  }

  #forget(id: string, entry: Entry): void {
    if (this.#entries.get(id) === entry) this.#entries.delete(id);
  }
}

const entryId = (host: string, key: BaiduKey) => `${host}\n${key.apiKey}\n${key.secretKey}`;

async function fetchToken(
  host: string,
  key: BaiduKey,
  transport: Transport,
  signal: AbortSignal,
): Promise<{ token: string; lifetimeMs: number } | { refused: { status: number; text: string } }> {
  const query = new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: key.apiKey,
    client_secret: key.secretKey,
  });
  const response = await transport.send(
    { url: `${host}/oauth/2.0/token?${query}`, method: 'POST', headers: { accept: 'application/json' } },
    signal,
  );
  const text = await response.body.text();
  let body: { access_token?: unknown; expires_in?: unknown } = {};
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: a refusal below.
  }
  if (response.status >= 400 || typeof body.access_token !== 'string' || body.access_token === '') {
    return { refused: { status: response.status >= 400 ? response.status : 401, text } };
  }
  const seconds = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : 3600;
  return { token: body.access_token, lifetimeMs: seconds * 1000 };
}
