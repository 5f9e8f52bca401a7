import { type Readable, Transform } from 'node:stream';
import zlib from 'node:zlib';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors.ts';
import { HTTP_ERRORS } from './errors.ts';

/** The request body codings we decode (Content-Encoding), by their HTTP names. */
const DECODERS: Record<string, (() => Transform) | undefined> = {
  gzip: zlib.createGunzip,
  'x-gzip': zlib.createGunzip,
  deflate: zlib.createInflate,
  br: zlib.createBrotliDecompress,
  // Node 22.15 and later; on an older Node a zstd body is refused like any unknown coding.
  zstd: zlib.createZstdDecompress,
};

/** A decompressed body as Fastify's body reader takes it: the compressed bytes read so far beside it. */
type DecodedBody = Transform & { receivedEncodedLength: number };

/**
 * A request body sent with Content-Encoding (gzip, deflate, br, zstd; several, in the order applied),
 * decoded as it is read, for Fastify's `preParsing` hook. The route's body limit applies to the
 * decoded bytes: decoding stops with 413 as soon as they pass it, so a small compressed body that
 * inflates without end (a zip bomb) costs no more memory than an honest body at the limit. An
 * unknown coding is refused with 415; a body that does not decode, with 400.
 */
export function decodeBody(request: FastifyRequest, payload: Readable): Readable {
  const header = request.headers['content-encoding'];
  if (!header) return payload;
  const codings = String(header)
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  if (codings.length === 0) return payload;
  const decoders = [...codings].reverse().map((coding) => {
    const create = DECODERS[coding];
    if (!create) throw new AppError(HTTP_ERRORS.UNSUPPORTED_CONTENT_ENCODING, { encoding: coding });
    return create();
  });

  const limit = request.routeOptions.bodyLimit;
  let failed = false;
  const fail = (error: unknown) => {
    if (failed) return;
    failed = true;
    // Stop decoding; what is left of the upload is read and dropped, so that the error can be answered.
    payload.unpipe(decoders[0]);
    payload.resume();
    for (const decoder of decoders) decoder.destroy();
    limiter.destroy(
      error instanceof AppError
        ? error
        : new AppError(HTTP_ERRORS.BAD_CONTENT_ENCODING, { encoding: codings.join(', ') }),
    );
  };
  let decoded = 0;
  const limiter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      decoded += chunk.length;
      if (decoded <= limit) return done(null, chunk);
      done();
      fail(new AppError(HTTP_ERRORS.BODY_TOO_LARGE));
    },
  }) as DecodedBody;
  // Fastify's body reader listens for the failure; a request whose body is never read (a GET, a content type
  // without a parser) must not take the process down with it.
  limiter.on('error', () => {});
  // Fastify compares Content-Length with the bytes that came over the wire, i.e. the compressed ones.
  limiter.receivedEncodedLength = 0;
  payload.on('data', (chunk: Buffer) => {
    limiter.receivedEncodedLength += chunk.length;
  });
  payload.on('error', fail);
  const chain = [...decoders, limiter];
  for (const [index, decoder] of decoders.entries()) {
    decoder.on('error', fail);
    decoder.pipe(chain[index + 1] as Transform);
  }
  payload.pipe(decoders[0] as Transform);
  return limiter;
}
