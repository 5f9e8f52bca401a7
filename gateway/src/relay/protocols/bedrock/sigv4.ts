import { createHash, createHmac } from 'node:crypto';
import type { UpstreamRequest } from '../types.ts';

/** An AWS access key pair (and the session token of temporary credentials). */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface SigningScope {
  region: string;
  service: string;
  /** The signing time; now unless a test pins it. */
  date?: Date;
}

/** Hop-by-hop and client headers a proxy may change on the way: signing them would break the signature. */
const UNSIGNED_HEADERS = new Set([
  'authorization',
  'connection',
  'content-length',
  'expect',
  'keep-alive',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'user-agent',
  'x-amzn-trace-id',
]);

const sha256Hex = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();

/** RFC 3986 percent-encoding, as SigV4 wants it (encodeURIComponent leaves !'()* alone). */
const uriEscape = (text: string) =>
  encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * The canonical URI of a service other than S3: the path as sent (already percent-encoded, e.g. a
 * model id's ':' as %3A), its empty and dot segments normalised, then encoded once more, so %3A
 * is signed as %253A — what AWS computes on its side.
 */
function canonicalPath(path: string): string {
  const segments: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  const trailing = segments.length > 0 && path.endsWith('/') ? '/' : '';
  return `/${segments.map(uriEscape).join('/')}${trailing}`;
}

/** Query parameters encoded and sorted by name, then value. */
function canonicalQuery(params: URLSearchParams): string {
  return [...params]
    .map(([name, value]) => [uriEscape(name), uriEscape(value)] as const)
    .sort(([a, x], [b, y]) => (a === b ? (x < y ? -1 : x > y ? 1 : 0) : a < b ? -1 : 1))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
}

/** `20240102T030405Z`, SigV4's timestamp. */
const amzDate = (date: Date) =>
  date
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/[-:]/g, '');

/**
 * Signs a request with AWS Signature Version 4 (header form): adds `x-amz-date` (and the session
 * token), then `authorization` over the method, canonical path and query, every signable header
 * and the body's SHA-256.
 */
export function signSigV4(request: UpstreamRequest, credentials: AwsCredentials, scope: SigningScope): UpstreamRequest {
  if (request.body instanceof FormData) throw new Error('SigV4 signing needs the body as bytes, not a form');
  const url = new URL(request.url);
  const longDate = amzDate(scope.date ?? new Date());
  const shortDate = longDate.slice(0, 8);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (name.toLowerCase() !== 'authorization') headers[name.toLowerCase()] = value;
  }
  headers.host = url.host;
  headers['x-amz-date'] = longDate;
  if (credentials.sessionToken) headers['x-amz-security-token'] = credentials.sessionToken;

  const signed = Object.keys(headers)
    .filter((name) => !UNSIGNED_HEADERS.has(name) && !name.startsWith('proxy-'))
    .sort();
  const canonicalRequest = [
    request.method,
    canonicalPath(url.pathname),
    canonicalQuery(url.searchParams),
    ...signed.map((name) => `${name}:${(headers[name] ?? '').trim().replace(/\s+/g, ' ')}`),
    '',
    signed.join(';'),
    sha256Hex(request.body ?? ''),
  ].join('\n');
  const credentialScope = `${shortDate}/${scope.region}/${scope.service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', longDate, credentialScope, sha256Hex(canonicalRequest)].join('\n');
  const signingKey = [shortDate, scope.region, scope.service, 'aws4_request'].reduce<string | Buffer>(
    (key, part) => hmac(key, part),
    `AWS4${credentials.secretAccessKey}`,
  );
  const signature = createHmac('sha256', signingKey).update(stringToSign).digest('hex');
  headers.authorization =
    `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${credentialScope}, ` +
    `SignedHeaders=${signed.join(';')}, Signature=${signature}`;
  return { ...request, headers };
}
