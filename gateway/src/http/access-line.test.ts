import type { FastifyBaseLogger } from 'fastify';
import { type LoggerOptions, pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { type AccessFacts, accessLineWriter } from './access-line.ts';

/** A pino logger writing into an array, with a fixed clock so that two lines can be compared. */
function capturing(options: LoggerOptions = {}) {
  const lines: string[] = [];
  const logger = pino(
    { level: 'info', base: { node: 'pod-1' }, timestamp: () => ',"time":1700000000000', ...options },
    { write: (line: string) => lines.push(line) },
  );
  return { logger: logger as unknown as FastifyBaseLogger, lines };
}

const cases: AccessFacts[] = [
  { requestId: 'abc123', method: 'POST', url: '/v1/chat/completions', statusCode: 200, responseTime: 1.2 },
  { requestId: 'trace-1:2.3', method: 'GET', url: '/a?q="x"&b=\\y', statusCode: 404, responseTime: 0 },
  // Latin-1 bytes of a raw request line, a control character, and a URL longer than pino's fast path.
  { requestId: 'r', method: 'GET', url: '/caf\u00e9/\u0001/\u00ff', statusCode: 500, responseTime: 12345.6 },
  { requestId: 'r', method: 'GET', url: `/${'x'.repeat(300)}`, statusCode: 101, responseTime: 0.1 },
];

/** The line pino's own info call writes for the same facts. */
function pinoLine(options: LoggerOptions, facts: AccessFacts): string {
  const { logger, lines } = capturing(options);
  logger.info(
    {
      request_id: facts.requestId,
      method: facts.method,
      url: facts.url,
      statusCode: facts.statusCode,
      responseTime: facts.responseTime,
    },
    'request completed',
  );
  return lines[0] as string;
}

describe('the access line', () => {
  it("is byte for byte the line pino's info call writes, on the gateway's logger", () => {
    for (const facts of cases) {
      const { logger, lines } = capturing();
      const info = vi.spyOn(logger, 'info');
      accessLineWriter(logger)(facts);
      expect(lines).toEqual([pinoLine({}, facts)]);
      // Put together here, not through pino's info.
      expect(info).not.toHaveBeenCalled();
      expect(JSON.parse(lines[0] as string)).toMatchObject({ level: 30, node: 'pod-1', url: facts.url });
    }
  });

  it('follows the bindings the logger has when it writes', () => {
    const { logger, lines } = capturing();
    const write = accessLineWriter(logger);
    (logger as unknown as { setBindings(b: object): void }).setBindings({ zone: 'z1' });
    write(cases[0] as AccessFacts);
    expect(JSON.parse(lines[0] as string)).toMatchObject({ node: 'pod-1', zone: 'z1', request_id: 'abc123' });
  });

  it('writes nothing when the logger is above info', () => {
    const { logger, lines } = capturing({ level: 'warn' });
    accessLineWriter(logger)(cases[0] as AccessFacts);
    expect(lines).toEqual([]);
  });

  it('leaves a logger it cannot copy to its own info call', () => {
    const options: LoggerOptions = {
      mixin: () => ({ extra: 1 }),
      formatters: { level: (label) => ({ level: label }) },
    };
    const { logger, lines } = capturing(options);
    const info = vi.spyOn(logger, 'info');
    accessLineWriter(logger)(cases[1] as AccessFacts);
    expect(info).toHaveBeenCalledOnce();
    expect(lines).toEqual([pinoLine(options, cases[1] as AccessFacts)]);
    expect(JSON.parse(lines[0] as string)).toMatchObject({ level: 'info', extra: 1 });
  });
});
