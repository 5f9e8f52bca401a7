import { once } from 'node:events';
import { Readable } from 'node:stream';
import { brotliCompressSync, gzipSync, zstdCompressSync } from 'node:zlib';
import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { AppError } from '../errors.ts';
import { decodeBody } from './decompress.ts';

const request = (encoding: string | undefined, bodyLimit = 1024 * 1024) =>
  ({
    headers: encoding === undefined ? {} : { 'content-encoding': encoding },
    routeOptions: { bodyLimit },
  }) as unknown as FastifyRequest;

/** Everything the decoded stream yields, or the error it ends with. */
async function drain(stream: Readable): Promise<{ bytes: Buffer; error?: unknown }> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    return { bytes: Buffer.concat(chunks) };
  } catch (error) {
    return { bytes: Buffer.concat(chunks), error };
  }
}

const text = Buffer.from(JSON.stringify({ model: 'm', input: 'x'.repeat(5000) }));

describe('decodeBody', () => {
  it('leaves an unencoded or identity body as it is', () => {
    const payload = Readable.from([text]);
    expect(decodeBody(request(undefined), payload)).toBe(payload);
    expect(decodeBody(request('identity'), payload)).toBe(payload);
  });

  it.each([
    ['gzip', gzipSync(text)],
    ['x-gzip', gzipSync(text)],
    ['br', brotliCompressSync(text)],
    ['zstd', zstdCompressSync(text)],
    ['gzip, br', brotliCompressSync(gzipSync(text))],
    ['GZIP', gzipSync(text)],
  ])('decodes %s and reports the bytes read off the wire', async (encoding, compressed) => {
    const decoded = decodeBody(request(encoding), Readable.from([compressed.subarray(0, 10), compressed.subarray(10)]));
    const { bytes, error } = await drain(decoded);
    expect(error).toBeUndefined();
    expect(bytes.equals(text)).toBe(true);
    expect((decoded as Readable & { receivedEncodedLength: number }).receivedEncodedLength).toBe(compressed.length);
  });

  it('refuses an unknown coding with 415 before reading anything', () => {
    const refuse = () => decodeBody(request('gzip, compress'), Readable.from([text]));
    expect(refuse).toThrow(AppError);
    expect(refuse).toThrow(/compress/);
    try {
      refuse();
    } catch (error) {
      expect((error as AppError).status).toBe(415);
      expect((error as AppError).code).toBe('UNSUPPORTED_CONTENT_ENCODING');
    }
  });

  it('ends with 400 when the body does not decode', async () => {
    const { error } = await drain(decodeBody(request('gzip'), Readable.from([Buffer.from('plain text')])));
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe('BAD_CONTENT_ENCODING');
    expect((error as AppError).status).toBe(400);
  });

  it('fails quietly when nobody reads the body (a GET that names a coding)', async () => {
    const decoded = decodeBody(request('gzip'), Readable.from([]));
    // An unhandled 'error' event would throw; the stream only ends destroyed.
    await new Promise((resolve) => decoded.on('close', resolve));
    expect(decoded.destroyed).toBe(true);
  });

  it('stops decoding a body that inflates past the limit, and drops the rest of the upload', async () => {
    const limit = 64 * 1024;
    // 200 members of 1 MiB of zeros: about 200 KiB compressed, 200 MiB decoded.
    const member = gzipSync(Buffer.alloc(1024 * 1024));
    const payload = Readable.from(Array.from({ length: 200 }, () => member));
    const { bytes, error } = await drain(decodeBody(request('gzip', limit), payload));
    expect((error as AppError).code).toBe('BODY_TOO_LARGE');
    expect((error as AppError).status).toBe(413);
    expect(bytes.length).toBeLessThanOrEqual(limit);
    if (!payload.readableEnded) await once(payload, 'end');
    expect(payload.readableEnded).toBe(true);
  });
});
