import { crc32 } from 'node:zlib';

/** A header value of the AWS event-stream framing (numbers of 64 bits as bigint, byte arrays as bytes). */
export type EventHeaderValue = boolean | number | bigint | string | Uint8Array | Date;

/** One message of an `application/vnd.amazon.eventstream` body. */
export interface EventStreamMessage {
  headers: Record<string, EventHeaderValue>;
  payload: Uint8Array;
}

/** The framing is broken (a CRC mismatch, impossible lengths): the stream cannot be trusted past it. */
export class EventStreamError extends Error {
  override readonly name = 'EventStreamError';
}

/** Total length, headers length, prelude CRC. */
const PRELUDE_BYTES = 12;
/** The message CRC after the payload. */
const TRAILER_BYTES = 4;
/** AWS caps a message at 16 MiB; a larger length is a corrupt prelude, not a message to wait for. */
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/**
 * Decodes the AWS event-stream binary framing incrementally: push chunks as they arrive (split
 * anywhere), get back the messages they completed. Each message is
 * `[total length u32][headers length u32][prelude CRC32][headers][payload][message CRC32]`,
 * both CRCs checked.
 */
export class EventStreamDecoder {
  #buffer: Buffer = Buffer.alloc(0);

  push(chunk: Uint8Array): EventStreamMessage[] {
    this.#buffer = this.#buffer.length === 0 ? Buffer.from(chunk) : Buffer.concat([this.#buffer, chunk]);
    const messages: EventStreamMessage[] = [];
    while (this.#buffer.length >= PRELUDE_BYTES) {
      const total = this.#buffer.readUInt32BE(0);
      const headersLength = this.#buffer.readUInt32BE(4);
      if (crc32(this.#buffer.subarray(0, 8)) !== this.#buffer.readUInt32BE(8)) {
        throw new EventStreamError('event stream prelude checksum mismatch');
      }
      if (total < PRELUDE_BYTES + TRAILER_BYTES + headersLength || total > MAX_MESSAGE_BYTES) {
        throw new EventStreamError(`event stream message length ${total} is impossible`);
      }
      if (this.#buffer.length < total) break;
      const message = this.#buffer.subarray(0, total);
      this.#buffer = this.#buffer.subarray(total);
      if (crc32(message.subarray(0, total - TRAILER_BYTES)) !== message.readUInt32BE(total - TRAILER_BYTES)) {
        throw new EventStreamError('event stream message checksum mismatch');
      }
      const headersEnd = PRELUDE_BYTES + headersLength;
      messages.push({
        headers: decodeHeaders(message.subarray(PRELUDE_BYTES, headersEnd)),
        payload: new Uint8Array(message.subarray(headersEnd, total - TRAILER_BYTES)),
      });
    }
    return messages;
  }

  /** Bytes left over at the end are a message cut short. */
  end(): void {
    if (this.#buffer.length > 0) throw new EventStreamError('event stream ended inside a message');
  }
}

/** Headers: `[name length u8][name][type u8][value]`, repeated. */
function decodeHeaders(bytes: Buffer): Record<string, EventHeaderValue> {
  const headers: Record<string, EventHeaderValue> = {};
  let at = 0;
  /** Claims the next `n` bytes of the section and answers where they start. */
  const take = (n: number) => {
    if (at + n > bytes.length) throw new EventStreamError('event stream header runs past its section');
    const start = at;
    at += n;
    return start;
  };
  while (at < bytes.length) {
    const nameLength = bytes.readUInt8(take(1));
    const nameStart = take(nameLength);
    const name = bytes.toString('utf8', nameStart, nameStart + nameLength);
    headers[name] = readValue(bytes.readUInt8(take(1)));
  }
  return headers;

  function readValue(type: number): EventHeaderValue {
    switch (type) {
      case 0:
        return true;
      case 1:
        return false;
      case 2:
        return bytes.readInt8(take(1));
      case 3:
        return bytes.readInt16BE(take(2));
      case 4:
        return bytes.readInt32BE(take(4));
      case 5:
        return bytes.readBigInt64BE(take(8));
      case 6:
      case 7: {
        const length = bytes.readUInt16BE(take(2));
        const start = take(length);
        const value = bytes.subarray(start, start + length);
        return type === 7 ? value.toString('utf8') : new Uint8Array(value);
      }
      case 8:
        return new Date(Number(bytes.readBigInt64BE(take(8))));
      case 9: {
        const start = take(16);
        return bytes.toString('hex', start, start + 16);
      }
      default:
        throw new EventStreamError(`event stream header type ${type} is unknown`);
    }
  }
}
