import { createHash, createHmac } from 'node:crypto';

/** A request to sign the Volcengine OpenAPI way (HMAC-SHA256 with a V4-style credential scope). */
export interface VolcSignInput {
  accessKey: string;
  secretKey: string;
  /** `cn-north-1` for the visual API. */
  region: string;
  /** The product the credential scope names (`cv` for the visual API). */
  service: string;
  method: string;
  url: URL;
  /** Headers to sign besides host, x-date and x-content-sha256 (content-type), by any case of name. */
  headers: Record<string, string>;
  body: string;
  now: Date;
}

export const sha256Hex = (text: string | Buffer) => createHash('sha256').update(text).digest('hex');
const hmac = (key: string | Buffer, text: string) => createHmac('sha256', key).update(text, 'utf8').digest();

/** `20261126T060000Z`: the X-Date of a moment. */
export const volcDate = (now: Date) =>
  now
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/[-:]/g, '');

/** RFC 3986 escaping, as Volcengine canonicalizes query names and values. */
const uriEscape = (text: string) =>
  encodeURIComponent(text).replace(/[!'()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`);

/** The query sorted by name, then value, each escaped: what the signature covers of it. */
export function canonicalQuery(params: URLSearchParams): string {
  return [...params]
    .map(([name, value]) => [uriEscape(name), uriEscape(value)] as const)
    .sort(([a, x], [b, y]) => (a === b ? (x < y ? -1 : 1) : a < b ? -1 : 1))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
}

/**
 * The signature over a canonical request (method, path, sorted query, the signed headers as
 * `name:value` lines, their names, the body's hash) with a key derived from the secret, the day,
 * region, service and `request`. Shared by the signer and the mock that checks it.
 */
export function volcSignature(input: {
  secretKey: string;
  region: string;
  service: string;
  method: string;
  path: string;
  query: string;
  /** Lower-case names and their values, the ones named in SignedHeaders. */
  signed: Array<[string, string]>;
  bodyHash: string;
  xDate: string;
}): { signature: string; signedHeaders: string; scope: string } {
  const signed = [...input.signed].sort(([a], [b]) => (a < b ? -1 : 1));
  const signedHeaders = signed.map(([name]) => name).join(';');
  const canonical = [
    input.method.toUpperCase(),
    input.path || '/',
    input.query,
    `${signed.map(([name, value]) => `${name}:${value.replace(/\s+/g, ' ').trim()}`).join('\n')}\n`,
    signedHeaders,
    input.bodyHash,
  ].join('\n');
  const day = input.xDate.slice(0, 8);
  const scope = `${day}/${input.region}/${input.service}/request`;
  const toSign = ['HMAC-SHA256', input.xDate, scope, sha256Hex(canonical)].join('\n');
  const key = hmac(hmac(hmac(hmac(input.secretKey, day), input.region), input.service), 'request');
  return { signature: createHmac('sha256', key).update(toSign, 'utf8').digest('hex'), signedHeaders, scope };
}

/** The headers that authorize the request: X-Date, X-Content-Sha256 and Authorization. */
export function volcSign(input: VolcSignInput): Record<string, string> {
  const xDate = volcDate(input.now);
  const bodyHash = sha256Hex(input.body);
  const signed: Array<[string, string]> = [
    ...Object.entries(input.headers).map(([name, value]) => [name.toLowerCase(), value] as [string, string]),
    ['host', input.url.host],
    ['x-date', xDate],
    ['x-content-sha256', bodyHash],
  ];
  const { signature, signedHeaders, scope } = volcSignature({
    secretKey: input.secretKey,
    region: input.region,
    service: input.service,
    method: input.method,
    path: input.url.pathname,
    query: canonicalQuery(input.url.searchParams),
    signed,
    bodyHash,
    xDate,
  });
  return {
    'x-date': xDate,
    'x-content-sha256': bodyHash,
    authorization: `HMAC-SHA256 Credential=${input.accessKey}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`,
  };
}
