import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { UpstreamResponse } from '../transport.ts';

type Chunk = string | Uint8Array;

/**
 * An answer built by a provider's own exchange (a polled job's result, an error an upstream sent
 * with HTTP 200, a key refused before any call), shaped like the transport's so the relay reads it
 * the same way: a Readable body with undici's body methods.
 */
export function syntheticResponse(
  status: number,
  contentType: string,
  chunks: Iterable<Chunk> | AsyncIterable<Chunk>,
): UpstreamResponse {
  const readable = Readable.from(chunks, { objectMode: false });
  const bytes = async () => {
    const parts: Buffer[] = [];
    for await (const chunk of readable) parts.push(Buffer.from(chunk as Uint8Array));
    return new Uint8Array(Buffer.concat(parts));
  };
  const mixin: Dispatcher.BodyMixin = {
    bodyUsed: false,
    bytes,
    arrayBuffer: async () => {
      const data = await bytes();
      return data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength) as ArrayBuffer;
    },
    text: async () => Buffer.from(await bytes()).toString('utf8'),
    json: async () => JSON.parse(Buffer.from(await bytes()).toString('utf8')),
    blob: async () => new Blob([await bytes()]),
    formData: () => Promise.reject(new Error('not a form body')),
  };
  return { status, headers: { 'content-type': contentType }, body: Object.assign(readable, mixin) };
}

/** A whole JSON answer. */
export function jsonResponse(status: number, body: unknown): UpstreamResponse {
  return syntheticResponse(status, 'application/json', [JSON.stringify(body)]);
}

/** An answer the transport returned, read whole: its status and headers kept, its body as text. */
export async function readWhole(response: UpstreamResponse): Promise<{ response: UpstreamResponse; text: string }> {
  const text = await response.body.text();
  const contentType = String(response.headers['content-type'] ?? 'application/json');
  return { text, response: { ...syntheticResponse(response.status, contentType, [text]), headers: response.headers } };
}

/** Whether an answer is JSON (read whole to look for an error a protocol reports with HTTP 200). */
export const isJson = (response: UpstreamResponse) =>
  String(response.headers['content-type'] ?? '').includes('application/json');
