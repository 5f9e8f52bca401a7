import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ClientSink } from './exchange/sink.ts';
import { relayNotes } from './outcome.ts';
import type { RelayContext } from './pipeline.ts';
import { sseFrames } from './sse.ts';

/**
 * The route's side of the relay: the one place an answer is written to a Fastify reply, and the
 * plain context the pipeline runs with. Nothing below the route sees Fastify.
 */
export function relayContext(request: FastifyRequest, reply: FastifyReply): RelayContext {
  return {
    requestId: request.id,
    path: request.url.split('?')[0] ?? '',
    headers: request.headers,
    sink: replySink(request, reply),
    notes: relayNotes(request, reply),
  };
}

/** A sink writing to the client's response: whole answers through Fastify, streams on the raw socket. */
export function replySink(request: FastifyRequest, reply: FastifyReply): ClientSink {
  const raw = reply.raw;
  return {
    async answer(status, contentType, body) {
      reply.code(status).header('content-type', contentType);
      await reply.send(Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength));
    },
    open(headers) {
      reply.hijack();
      raw.writeHead(200, { ...headers, 'x-request-id': request.id });
    },
    write: (events, bytes) => raw.write(bytes ?? sseFrames(events)),
    drained: () =>
      new Promise<void>((resolve) => {
        const done = () => {
          raw.off('drain', done);
          raw.off('close', done);
          resolve();
        };
        raw.on('drain', done);
        raw.on('close', done);
      }),
    ping: () => {
      raw.write(': PING\n\n');
    },
    end: () => {
      raw.end();
    },
    destroy: () => {
      raw.destroy();
    },
    onGone(listener) {
      const onClose = () => {
        if (!raw.writableFinished) listener();
      };
      raw.on('close', onClose);
      return () => raw.off('close', onClose);
    },
    get started() {
      return reply.sent || raw.headersSent;
    },
  };
}
