import { createHmac } from 'node:crypto';
import { keyParts } from '../key-parts.ts';

/** Kling channel type: its key is `AccessKey|SecretKey`, checked part by part when the channel is saved. */
export const KLING_TYPE = 50;

/** Kling's tokens live 30 minutes, as its documentation signs them. */
const LIFETIME_SECONDS = 1800;
/** Valid from a few seconds back, so a clock slightly ahead of Kling's does not make a token "not yet valid". */
const SKEW_SECONDS = 5;

const base64url = (text: string) => Buffer.from(text).toString('base64url');

/**
 * The token Kling's API takes as `Authorization: Bearer …`: an HS256 JWT (header `{alg: HS256, typ: JWT}`)
 * naming the access key as `iss`, valid from `nbf` to `exp`, signed with the secret key.
 */
export function signKlingToken(accessKey: string, secretKey: string, nowSeconds: number): string {
  const header = base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
  const payload = base64url(
    JSON.stringify({ iss: accessKey, exp: nowSeconds + LIFETIME_SECONDS, nbf: nowSeconds - SKEW_SECONDS }),
  );
  const signature = createHmac('sha256', secretKey).update(`${header}.${payload}`).digest('base64url');
  return `${header}.${payload}.${signature}`;
}

/**
 * The headers of a request to Kling with a fresh token from the channel key (signing is one HMAC, so
 * every request, poll included, gets its own and none expires in a queue).
 */
export function klingHeaders(key: string, now: () => number = Date.now): Record<string, string> {
  const [accessKey, secretKey] = keyParts(KLING_TYPE, key) as [string, string];
  return {
    authorization: `Bearer ${signKlingToken(accessKey, secretKey, Math.floor(now() / 1000))}`,
    accept: 'application/json',
  };
}
