import { Readable } from 'node:stream';
import type { UpstreamResponse } from '../transport.ts';

/** A whole JSON answer as the transport gives one (helper for the model-list unit tests). */
export function jsonAnswer(status: number, body: unknown, headers: Record<string, string> = {}): UpstreamResponse {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return {
    status,
    headers: { 'content-type': 'application/json', ...headers },
    body: Object.assign(Readable.from([Buffer.from(text)]), {
      text: async () => text,
      json: async () => JSON.parse(text) as unknown,
    }) as unknown as UpstreamResponse['body'],
  };
}
