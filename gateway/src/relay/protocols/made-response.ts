import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { type SseEvent, sseData } from '../sse.ts';
import type { UpstreamResponse } from '../transport.ts';

/**
 * An answer a `send` hook made itself (a polled job's result, a stream assembled into one answer),
 * readable by the pipeline exactly like a transport's: as a stream or whole.
 */
export function madeResponse(status: number, contentType: string, text: string): UpstreamResponse {
  const bytes = Buffer.from(text, 'utf8');
  const body = Readable.from([bytes]) as Readable & Partial<Dispatcher.BodyMixin>;
  body.text = async () => text;
  body.json = async () => JSON.parse(text);
  body.arrayBuffer = async () => bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  return { status, headers: { 'content-type': contentType }, body: body as Readable & Dispatcher.BodyMixin };
}

export const madeJson = (status: number, value: unknown) =>
  madeResponse(status, 'application/json', JSON.stringify(value));

export const madeSse = (events: readonly SseEvent[]) =>
  madeResponse(200, 'text/event-stream', events.map((e) => sseData(e.data, e.event)).join(''));

/** A streamed answer a `send` hook produces chunk by chunk (an upstream stream with events of its own added). */
export function madeStream(contentType: string, chunks: AsyncIterable<Uint8Array>): UpstreamResponse {
  const body = Readable.from(chunks) as Readable & Partial<Dispatcher.BodyMixin>;
  const whole = async () => {
    const parts: Buffer[] = [];
    for await (const chunk of body) parts.push(Buffer.from(chunk as Uint8Array));
    return Buffer.concat(parts);
  };
  body.text = async () => (await whole()).toString('utf8');
  body.arrayBuffer = async () => {
    const bytes = await whole();
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  };
  return { status: 200, headers: { 'content-type': contentType }, body: body as Readable & Dispatcher.BodyMixin };
}
