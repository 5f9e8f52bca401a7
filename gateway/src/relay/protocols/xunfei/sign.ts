import { createHmac } from 'node:crypto';

/**
 * Xunfei's signed WebSocket URL: an HMAC-SHA256 (with the APISecret) over the host, the RFC 1123
 * date and the request line, wrapped with the APIKey into a base64 `authorization` query parameter
 * beside the date and host it covers.
 */
export function sparkSignedUrl(url: string, apiKey: string, apiSecret: string, date: Date = new Date()): string {
  const target = new URL(url);
  const rfc1123 = date.toUTCString();
  const signed = `host: ${target.host}\ndate: ${rfc1123}\nGET ${target.pathname} HTTP/1.1`;
  const signature = createHmac('sha256', apiSecret).update(signed, 'utf8').digest('base64');
  const authorization = `api_key="${apiKey}", algorithm="hmac-sha256", headers="host date request-line", signature="${signature}"`;
  target.search = new URLSearchParams({
    authorization: Buffer.from(authorization, 'utf8').toString('base64'),
    date: rfc1123,
    host: target.host,
  }).toString();
  return target.toString();
}
