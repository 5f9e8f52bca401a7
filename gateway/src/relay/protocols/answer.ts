import { Readable } from 'node:stream';
import type { UpstreamResponse } from '../transport.ts';

/**
 * An upstream answer built by a provider rather than read off one HTTP response: a rewritten
 * status (an error some upstreams send with HTTP 200), decoded audio, or a WebSocket session turned
 * into a stream. It reads like the transport's answers (a Readable with fetch's body methods).
 */
export function providerAnswer(status: number, contentType: string, body: Uint8Array | Readable): UpstreamResponse {
  const stream = body instanceof Readable ? body : Readable.from([Buffer.from(body)]);
  const bytes = async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
    return Buffer.concat(chunks);
  };
  const mixin = {
    get bodyUsed() {
      return stream.readableDidRead;
    },
    bytes: async () => new Uint8Array(await bytes()),
    arrayBuffer: async () => {
      const all = await bytes();
      return all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength) as ArrayBuffer;
    },
    text: async () => (await bytes()).toString('utf8'),
    json: async () => JSON.parse((await bytes()).toString('utf8')) as unknown,
    blob: async () => new Blob([await bytes()], { type: contentType }),
    formData: () => Promise.reject(new Error('a provider answer has no form data')) as Promise<never>,
  };
  Object.defineProperties(stream, Object.getOwnPropertyDescriptors(mixin));
  return { status, headers: { 'content-type': contentType }, body: stream as UpstreamResponse['body'] };
}

/** The whole body of an answer whose content type says JSON; undefined for other answers (streams, audio). */
export async function jsonAnswerText(response: UpstreamResponse): Promise<string | undefined> {
  const type = String(response.headers['content-type'] ?? '');
  return type.includes('application/json') ? response.body.text() : undefined;
}

/** A whole JSON answer: text already serialised, or a value to serialise. */
export function jsonAnswer(status: number, body: unknown): UpstreamResponse {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return providerAnswer(status, 'application/json', Buffer.from(text));
}
