import { createHash, createHmac } from 'node:crypto';

/** What a TC3-HMAC-SHA256 signature covers. */
export interface Tc3Input {
  secretId: string;
  secretKey: string;
  /** The cloud product the credential scope names (`hunyuan`). */
  service: string;
  /** The Host header's value. */
  host: string;
  contentType: string;
  payload: string;
  /** Unix seconds, as sent in X-TC-Timestamp. */
  timestamp: number;
  method?: string;
  path?: string;
  query?: string;
}

const sha256Hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const hmac = (key: string | Buffer, text: string) => createHmac('sha256', key).update(text, 'utf8').digest();

/** The UTC day of a timestamp (YYYY-MM-DD), the credential scope's date. */
export const tc3Date = (timestamp: number) => new Date(timestamp * 1000).toISOString().slice(0, 10);

/**
 * Tencent Cloud API v3 signing: the canonical request (method, path, query, the signed headers
 * content-type and host, the payload's hash) hashed into the string to sign, then HMAC-SHA256 with a
 * key derived from the secret, the day and the service. Answers the Authorization header's value.
 */
export function tc3Authorization(input: Tc3Input): string {
  const date = tc3Date(input.timestamp);
  const scope = `${date}/${input.service}/tc3_request`;
  const canonical = [
    input.method ?? 'POST',
    input.path ?? '/',
    input.query ?? '',
    `content-type:${input.contentType}\nhost:${input.host}\n`,
    'content-type;host',
    sha256Hex(input.payload),
  ].join('\n');
  const toSign = ['TC3-HMAC-SHA256', String(input.timestamp), scope, sha256Hex(canonical)].join('\n');
  const signingKey = hmac(hmac(hmac(`TC3${input.secretKey}`, date), input.service), 'tc3_request');
  const signature = createHmac('sha256', signingKey).update(toSign, 'utf8').digest('hex');
  return `TC3-HMAC-SHA256 Credential=${input.secretId}/${scope}, SignedHeaders=content-type;host, Signature=${signature}`;
}
