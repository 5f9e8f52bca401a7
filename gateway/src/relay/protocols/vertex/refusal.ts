import { Readable } from 'node:stream';
import type { UpstreamResponse } from '../../transport.ts';

/**
 * An answer the provider gives itself, in Google's error shape, when the request cannot go out (the
 * token endpoint refused the service account): the relay reports it like any upstream refusal.
 */
export function googleRefusal(status: number, statusName: string, message: string): UpstreamResponse {
  const text = JSON.stringify({ error: { code: status, message, status: statusName } });
  const body = Object.assign(Readable.from([Buffer.from(text)]), {
    text: async () => text,
    json: async () => JSON.parse(text) as unknown,
    arrayBuffer: async () => new TextEncoder().encode(text).buffer,
    bytes: async () => new TextEncoder().encode(text),
    blob: async () => new Blob([text], { type: 'application/json' }),
  });
  return {
    status,
    headers: { 'content-type': 'application/json; charset=UTF-8' },
    body: body as unknown as UpstreamResponse['body'],
  };
}
