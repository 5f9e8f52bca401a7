import type { FastifyBaseLogger } from 'fastify';
import { type Logger, symbols } from 'pino';

/** What the access line says about a request. */
export interface AccessFacts {
  requestId: string;
  method: string;
  url: string;
  statusCode: number;
  /** Milliseconds, to a tenth. */
  responseTime: number;
}

const MESSAGE = 'request completed';
const INFO = 30;

/**
 * Writes the access line of a request: the line `logger.info({ request_id, method, url, statusCode,
 * responseTime }, 'request completed')` writes, byte for byte. On the gateway's logger (pino with a
 * plain configuration: no mixin, formatters, hooks, redaction or message prefix), the line is put
 * together here from the logger's own parts (its level label, clock and bindings) and handed to its
 * stream, instead of pino walking a fields object it cannot know the shape of, once per request. Any
 * other logger gets the `info` call itself.
 */
export function accessLineWriter(logger: FastifyBaseLogger): (facts: AccessFacts) => void {
  const viaInfo = (facts: AccessFacts) =>
    logger.info(
      {
        request_id: facts.requestId,
        method: facts.method,
        url: facts.url,
        statusCode: facts.statusCode,
        responseTime: facts.responseTime,
      },
      MESSAGE,
    );
  const parts = plainPinoParts(logger);
  if (!parts) return viaInfo;
  const pinoLogger = logger as unknown as Logger;
  // Read per line: a logger's bindings can change (setBindings).
  const inner = logger as unknown as Record<symbol, string>;
  return (facts) => {
    if (pinoLogger.levelVal > INFO) return;
    // JSON.stringify escapes as pino does: the fields are header and request-line strings (Latin-1
    // code units, never a lone surrogate, the one case where pino's escaping and JSON's differ).
    parts.stream.write(
      `${parts.level}${parts.time.call(logger)}${inner[symbols.chindingsSym]},"request_id":${JSON.stringify(facts.requestId)},"method":${JSON.stringify(facts.method)},"url":${JSON.stringify(facts.url)},"statusCode":${numberOf(facts.statusCode)},"responseTime":${numberOf(facts.responseTime)},"msg":"${MESSAGE}"${parts.end}`,
    );
  };
}

/** A number as pino writes one: non-finite ones as null. */
const numberOf = (value: number) => (Number.isFinite(value) ? String(value) : 'null');

interface PinoParts {
  level: string;
  time: (this: unknown) => string;
  end: string;
  stream: { write(line: string): void };
}

/** The parts of a pino logger's lines, when it writes them the plain way; undefined otherwise. */
function plainPinoParts(logger: FastifyBaseLogger): PinoParts | undefined {
  const inner = logger as unknown as Record<symbol, any>;
  const stream = inner[symbols.streamSym];
  const levels = inner[symbols.lsCacheSym];
  const formatters = inner[symbols.formattersSym];
  const hooks = inner[symbols.hooksSym];
  const serializers = inner[symbols.serializersSym] ?? {};
  const stringifiers = inner[symbols.stringifiersSym] ?? {};
  const plain =
    typeof stream?.write === 'function' &&
    stream[symbols.needsMetadataGsym] !== true &&
    typeof levels?.[INFO] === 'string' &&
    typeof inner[symbols.timeSym] === 'function' &&
    typeof inner[symbols.chindingsSym] === 'string' &&
    typeof inner[symbols.endSym] === 'string' &&
    !inner[symbols.mixinSym] &&
    // Exported by pino, missing from its types.
    !inner[(symbols as unknown as Record<string, symbol>).msgPrefixSym as symbol] &&
    !inner[symbols.nestedKeySym] &&
    inner[symbols.messageKeySym] === 'msg' &&
    !formatters?.log &&
    !hooks?.logMethod &&
    !hooks?.streamWrite &&
    Object.getOwnPropertySymbols(stringifiers).length === 0 &&
    Object.keys(stringifiers).length === 0 &&
    ['request_id', 'method', 'url', 'statusCode', 'responseTime', 'msg'].every((key) => !serializers[key]);
  if (!plain) return undefined;
  return {
    level: levels[INFO],
    time: inner[symbols.timeSym],
    end: inner[symbols.endSym],
    stream,
  };
}
