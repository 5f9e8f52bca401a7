import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';

// Not `import … from 'node:http'`: the ES module view of node:http reads all of its exports, and its lazy
// WebSocket export loads Node's own copy of undici (about 2 MiB of heap) into a gateway that never uses it.
const { ServerResponse } = process.getBuiltinModule('node:http');

/** A WebSocket handshake waiting for its route to accept it: the raw socket and what was read past the headers. */
export interface PendingUpgrade {
  socket: Duplex;
  head: Buffer;
}

const pending = new WeakMap<IncomingMessage, PendingUpgrade>();

/**
 * Sends WebSocket handshakes through Fastify like any other request, so that routes, hooks (key
 * auth, relay metrics) and the error handler apply to them: a refused handshake is an ordinary HTTP
 * answer (401, 426, …) and a route may accept it with `takeUpgrade`. Node hands an `Upgrade`
 * request to the 'upgrade' event with its parser already detached; the response written here is
 * bound to that socket and closes it once sent.
 */
export function routeUpgrades(app: FastifyInstance): void {
  app.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    pending.set(req, { socket, head });
    const res = new ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket as Socket);
    res.once('finish', () => socket.end());
    app.routing(req, res);
  });
}

/** The handshake of a request that came in as an upgrade, taken once; undefined for a plain HTTP request. */
export function takeUpgrade(request: FastifyRequest): PendingUpgrade | undefined {
  const upgrade = pending.get(request.raw);
  pending.delete(request.raw);
  return upgrade;
}
