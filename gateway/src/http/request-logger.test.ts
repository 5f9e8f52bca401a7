import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { requestLogger } from './request-logger.ts';

/** A Fastify server on a pino logger whose lines are kept, and a count of the child loggers made. */
function server() {
  const lines: Array<Record<string, unknown>> = [];
  const out = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  const logger = pino({ base: null }, out);
  let children = 0;
  const child = logger.child.bind(logger);
  logger.child = ((...args: Parameters<typeof child>) => {
    children++;
    return child(...args);
  }) as typeof logger.child;
  const app = Fastify({
    loggerInstance: logger,
    genReqId: () => 'req-1',
    disableRequestLogging: true,
    childLoggerFactory: requestLogger,
  });
  app.addHook('onReady', async () => {
    children = 0;
  });
  return { app, lines, children: () => children };
}

describe('requestLogger', () => {
  it('makes no child logger for a request that logs nothing', async () => {
    const { app, lines, children } = server();
    app.get('/quiet', async () => 'ok');
    expect((await app.inject('/quiet')).statusCode).toBe(200);
    expect(children()).toBe(0);
    expect(lines).toEqual([]);
  });

  it('logs with the request id bound, at the route level, once something logs', async () => {
    const { app, lines, children } = server();
    app.get('/loud', async (request) => {
      request.log.warn({ detail: 1 }, 'something');
      request.log.error(new Error('boom'));
      return 'ok';
    });
    app.get('/probe', { logLevel: 'warn' }, async (request) => {
      request.log.info('not written');
      return request.log.level;
    });
    await app.inject('/loud');
    expect(children()).toBe(1);
    expect(lines[0]).toMatchObject({ level: 40, reqId: 'req-1', detail: 1, msg: 'something' });
    expect(lines[1]).toMatchObject({ level: 50, reqId: 'req-1', err: { message: 'boom' } });
    expect((await app.inject('/probe')).body).toBe('warn');
    expect(lines).toHaveLength(2);
  });
});
