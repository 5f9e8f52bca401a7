import Fastify from 'fastify';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { shutdownOnce } from './shutdown.ts';

async function slowApp(delayMs: number, onAnswered: () => void = () => {}) {
  const app = Fastify();
  // Recorded by the server when its answer has gone out: the client's fetch resolving in this same process
  // may come after the shutdown's steps on a busy machine, though the answer went out before them.
  app.addHook('onResponse', async () => onAnswered());
  app.get('/slow', async () => {
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    return { done: true };
  });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, url };
}

const silent = pino({ level: 'silent' });

describe('graceful shutdown', () => {
  it('lets in-flight requests finish, refuses new connections, then runs the steps in order', async () => {
    const events: string[] = [];
    const { app, url } = await slowApp(400, () => events.push('response'));
    const stop = shutdownOnce({
      app,
      logger: silent,
      drainTimeoutMs: 5000,
      onDrainStart: () => events.push('drain'),
      steps: [
        { name: 'flush', run: async () => void events.push('flush') },
        { name: 'close', run: async () => void events.push('close') },
      ],
    });
    const inFlight = fetch(`${url}/slow`).then(async (r) => ({ status: r.status, body: await r.json() }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const stopped = stop();
    expect(stop()).toBe(stopped);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await expect(fetch(`${url}/slow`, { headers: { connection: 'close' } })).rejects.toThrow();
    expect(await inFlight).toEqual({ status: 200, body: { done: true } });
    await stopped;
    expect(events).toEqual(['drain', 'response', 'flush', 'close']);
  });

  it('closes connections still busy at the drain timeout and still runs every step', async () => {
    const { app, url } = await slowApp(10_000);
    const ran: string[] = [];
    const stop = shutdownOnce({
      app,
      logger: silent,
      drainTimeoutMs: 200,
      onDrainStart: () => {},
      steps: [
        { name: 'broken', run: async () => Promise.reject(new Error('flush failed')) },
        { name: 'close', run: async () => void ran.push('close') },
      ],
    });
    const inFlight = fetch(`${url}/slow`).then(
      () => 'answered',
      () => 'cut off',
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = Date.now();
    await stop();
    expect(Date.now() - started).toBeLessThan(2000);
    expect(await inFlight).toBe('cut off');
    expect(ran).toEqual(['close']);
  });

  it('at the drain timeout lets open streams end themselves before connections are closed', async () => {
    const app = Fastify();
    const drain = new AbortController();
    app.get('/stream', async (_request, reply) => {
      reply.hijack();
      reply.raw.writeHead(200, { 'content-type': 'text/event-stream' });
      reply.raw.write('data: 1\n\n');
      // Ends, as a relayed stream does with its `draining` ending, only when told.
      drain.signal.addEventListener('abort', () => setTimeout(() => reply.raw.end('data: ended\n\n'), 100));
    });
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    const stop = shutdownOnce({
      app,
      logger: silent,
      drainTimeoutMs: 200,
      onDrainStart: () => {},
      onDrainTimeout: () => drain.abort(),
      steps: [],
    });
    const body = fetch(`${url}/stream`).then((r) => r.text());
    await new Promise((resolve) => setTimeout(resolve, 100));
    await stop();
    expect(drain.signal.aborted).toBe(true);
    expect(await body).toBe('data: 1\n\ndata: ended\n\n');
  });
});
