import { createHmac } from 'node:crypto';

/** A Zhipu v3 channel key: `id.secret`, the id named in the token and the secret that signs it. */
export interface ZhipuKey {
  id: string;
  secret: string;
}

/** The key's two parts, or undefined when it is not `id.secret`. */
export function parseZhipuKey(key: string): ZhipuKey | undefined {
  const dot = key.indexOf('.');
  const id = key.slice(0, dot).trim();
  const secret = key.slice(dot + 1).trim();
  if (dot <= 0 || !id || !secret || secret.includes('.')) return undefined;
  return { id, secret };
}

const base64url = (text: string | Buffer) => Buffer.from(text).toString('base64url');

/**
 * Zhipu's HS256 token: header `{alg, sign_type: "SIGN"}`, payload `{api_key, exp, timestamp}` with
 * both times in milliseconds, signed with the key's secret.
 */
export function signZhipuToken(key: ZhipuKey, nowMs: number, lifetimeMs: number): string {
  const header = base64url(JSON.stringify({ alg: 'HS256', sign_type: 'SIGN' }));
  const payload = base64url(JSON.stringify({ api_key: key.id, exp: nowMs + lifetimeMs, timestamp: nowMs }));
  const signature = createHmac('sha256', key.secret).update(`${header}.${payload}`).digest('base64url');
  return `${header}.${payload}.${signature}`;
}

/** Tokens live this long; one is reused until a minute before it expires. */
const LIFETIME_MS = 10 * 60 * 1000;
const REUSE_MS = LIFETIME_MS - 60 * 1000;

/** Signed tokens cached per key, so each request does not sign anew. */
export class ZhipuTokens {
  readonly #tokens = new Map<string, { token: string; until: number }>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  get(key: ZhipuKey): string {
    const id = `${key.id}.${key.secret}`;
    const now = this.#now();
    const cached = this.#tokens.get(id);
    if (cached && cached.until > now) return cached.token;
    const token = signZhipuToken(key, now, LIFETIME_MS);
    this.#tokens.set(id, { token, until: now + REUSE_MS });
    return token;
  }
}
