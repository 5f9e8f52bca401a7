import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ClientSink } from './exchange/sink.ts';
import { relayNotes } from './outcome.ts';
import type { RelayContext } from './pipeline.ts';
import { type SseEvent, sseFrames } from './sse.ts';

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
  return new ReplySink(request, reply);
}

/** A class, not an object literal of closures: one small object per request, its methods shared. */
class ReplySink implements ClientSink {
  readonly #request: FastifyRequest;
  readonly #reply: FastifyReply;

  constructor(request: FastifyRequest, reply: FastifyReply) {
    this.#request = request;
    this.#reply = reply;
  }

  async answer(status: number, contentType: string, body: Uint8Array): Promise<void> {
    this.#reply.code(status).header('content-type', contentType);
    await this.#reply.send(Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength));
  }

  header(name: string, value: string): void {
    // On the raw response: both a whole answer (Fastify's send) and a stream (writeHead) carry it.
    if (!this.#reply.raw.headersSent) this.#reply.raw.setHeader(name, value);
  }

  open(headers: Record<string, string>): void {
    this.#reply.hijack();
    this.#reply.raw.writeHead(200, { ...headers, 'x-request-id': this.#request.id });
  }

  write(events: readonly SseEvent[], bytes?: Uint8Array): boolean {
    return this.#reply.raw.write(bytes ?? sseFrames(events));
  }

  drained(): Promise<void> {
    const raw = this.#reply.raw;
    return new Promise<void>((resolve) => {
      const done = () => {
        raw.off('drain', done);
        raw.off('close', done);
        resolve();
      };
      raw.on('drain', done);
      raw.on('close', done);
    });
  }

  ping(): void {
    this.#reply.raw.write(': PING\n\n');
  }

  end(): void {
    this.#reply.raw.end();
  }

  destroy(): void {
    this.#reply.raw.destroy();
  }

  onGone(listener: () => void): () => void {
    const raw = this.#reply.raw;
    const onClose = () => {
      if (!raw.writableFinished) listener();
    };
    // Gone already (while the request was being reserved and routed): told at once.
    if (raw.destroyed) {
      onClose();
      return () => {};
    }
    raw.on('close', onClose);
    return () => raw.off('close', onClose);
  }

  get started(): boolean {
    return this.#reply.sent || this.#reply.raw.headersSent;
  }
}
