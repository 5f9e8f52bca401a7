import { EventStreamCodec } from '@smithy/eventstream-codec';
import type { Message } from '@smithy/types';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { describe, expect, it } from 'vitest';
import { EventStreamDecoder, EventStreamError, type EventStreamMessage } from './event-stream.ts';

// Frames made by AWS's own codec (@smithy/eventstream-codec), decoded by ours.
const codec = new EventStreamCodec(toUtf8, fromUtf8);

const messages: Message[] = [
  {
    headers: {
      ':event-type': { type: 'string', value: 'chunk' },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'event' },
    },
    body: fromUtf8('{"bytes":"eyJ0eXBlIjoicGluZyJ9","p":"abc"}'),
  },
  {
    headers: {
      flag: { type: 'boolean', value: true },
      off: { type: 'boolean', value: false },
      byte: { type: 'byte', value: -7 },
      short: { type: 'short', value: 1234 },
      int: { type: 'integer', value: -123456 },
      bin: { type: 'binary', value: new Uint8Array([1, 2, 3]) },
      when: { type: 'timestamp', value: new Date('2025-01-02T03:04:05.678Z') },
      id: { type: 'uuid', value: '0102a3a4-b5b6-c7c8-d9da-e1e2e3e4e5e6' },
      'é-unicode': { type: 'string', value: 'naïve ✓' },
    },
    body: fromUtf8('{"text":"héllo ✓"}'),
  },
  { headers: {}, body: new Uint8Array(0) },
];
const frames = messages.map((message) => codec.encode(message));
const stream = Buffer.concat(frames);

const simple = (decoded: EventStreamMessage[]) =>
  decoded.map((m) => ({ headers: m.headers, payload: Buffer.from(m.payload).toString('utf8') }));

const expected = [
  {
    headers: { ':event-type': 'chunk', ':content-type': 'application/json', ':message-type': 'event' },
    payload: '{"bytes":"eyJ0eXBlIjoicGluZyJ9","p":"abc"}',
  },
  {
    headers: {
      flag: true,
      off: false,
      byte: -7,
      short: 1234,
      int: -123456,
      bin: new Uint8Array([1, 2, 3]),
      when: new Date('2025-01-02T03:04:05.678Z'),
      id: '0102a3a4b5b6c7c8d9dae1e2e3e4e5e6',
      'é-unicode': 'naïve ✓',
    },
    payload: '{"text":"héllo ✓"}',
  },
  { headers: {}, payload: '' },
];

/** A deterministic pseudo-random sequence, so a failing split can be replayed. */
function* randomSizes(seed: number): Generator<number> {
  let state = seed;
  for (;;) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    yield 1 + (state % 40);
  }
}

describe('event-stream decoder', () => {
  it('decodes whole frames, every header type and the payloads', () => {
    const decoder = new EventStreamDecoder();
    expect(simple(decoder.push(stream))).toEqual(expected);
    expect(() => decoder.end()).not.toThrow();
  });

  it('decodes the same fed byte by byte', () => {
    const decoder = new EventStreamDecoder();
    const decoded: EventStreamMessage[] = [];
    for (const byte of stream) decoded.push(...decoder.push(Uint8Array.of(byte)));
    expect(simple(decoded)).toEqual(expected);
  });

  it.each([1, 2, 3, 42, 1234])('decodes the same in random splits (seed %i)', (seed) => {
    const decoder = new EventStreamDecoder();
    const decoded: EventStreamMessage[] = [];
    const sizes = randomSizes(seed);
    for (let at = 0; at < stream.length; ) {
      const size = sizes.next().value as number;
      decoded.push(...decoder.push(stream.subarray(at, at + size)));
      at += size;
    }
    expect(simple(decoded)).toEqual(expected);
  });

  it('rejects a corrupt payload (message CRC) and a corrupt length (prelude CRC)', () => {
    const payload = Buffer.from(frames[0] as Uint8Array);
    payload.writeUInt8(payload.readUInt8(payload.length - 10) ^ 1, payload.length - 10);
    expect(() => new EventStreamDecoder().push(payload)).toThrow(
      new EventStreamError('event stream message checksum mismatch'),
    );
    const prelude = Buffer.from(frames[0] as Uint8Array);
    prelude.writeUInt8(prelude.readUInt8(3) ^ 1, 3);
    expect(() => new EventStreamDecoder().push(prelude)).toThrow(
      new EventStreamError('event stream prelude checksum mismatch'),
    );
  });

  it('waits for a frame cut short, and says so when the stream ends inside it', () => {
    const decoder = new EventStreamDecoder();
    expect(decoder.push((frames[0] as Uint8Array).subarray(0, 20))).toEqual([]);
    expect(() => decoder.end()).toThrow('event stream ended inside a message');
  });
});
