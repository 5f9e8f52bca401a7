import { describe, expect, it } from 'vitest';
import { SseParser, sseData, sseFrame } from './sse.ts';

const bytes = (text: string) => new TextEncoder().encode(text);

describe('SSE parser', () => {
  it('parses events split across chunks at any byte, multi-byte characters included', () => {
    const stream = `${sseData('{"a":"你好"}')}: ping\n\n${sseData('{"b":1}', 'delta')}data: line1\ndata: line2\n\ndata: [DONE]\n\n`;
    const all = bytes(stream);
    for (let cut = 1; cut < all.length; cut += 7) {
      const parser = new SseParser();
      const events = [...parser.push(all.slice(0, cut)), ...parser.push(all.slice(cut)), ...parser.end()];
      expect(events).toEqual([
        { data: '{"a":"你好"}' },
        { event: 'delta', data: '{"b":1}' },
        { data: 'line1\nline2' },
        { data: '[DONE]' },
      ]);
    }
  });

  it('handles CRLF and a final event without a blank line', () => {
    const parser = new SseParser();
    expect(parser.push(bytes('data: x\r\n\r\ndata: y'))).toEqual([{ data: 'x' }]);
    expect(parser.end()).toEqual([{ data: 'y' }]);
  });

  it("reads empty data lines, with or without a colon, and keeps a data value's own spaces after the first", () => {
    const parser = new SseParser();
    expect(parser.push(bytes('data\n\ndata:\r\n\r\ndata:  two\ndata:x\n\n'))).toEqual([
      { data: '' },
      { data: '' },
      { data: ' two\nx' },
    ]);
  });

  it("keeps each event's raw text across any chunk cut, and re-frames events with other lines", () => {
    const blocks = ['data:{"a":1}\r\n\r\n', 'event: delta\ndata: {"b":"你好"}\n\n', 'data: x\ndata: y\n\n'];
    const stream = `${blocks[0]}: ping\n\n${blocks[1]}id: 7\ndata: z\n\n${blocks[2]}`;
    const all = bytes(stream);
    for (let cut = 1; cut < all.length; cut += 3) {
      const parser = new SseParser();
      const events = [...parser.push(all.slice(0, cut)), ...parser.push(all.slice(cut)), ...parser.end()];
      expect(events.map((e) => e.raw)).toEqual([blocks[0], blocks[1], undefined, blocks[2]]);
      expect(sseFrame(events[2]!)).toBe('data: z\n\n');
    }
  });

  it('says when a chunk was exactly whole events, each framed as it came', () => {
    const parser = new SseParser();
    const exact = (text: string | Uint8Array) => {
      parser.push(typeof text === 'string' ? bytes(text) : text);
      return parser.exact;
    };
    expect(exact('data: a\n\nevent: e\r\ndata: b\r\n\r\n')).toBe(true);
    expect(exact('data: c\n\ndata: d')).toBe(false); // an event left over
    expect(exact('\n\n')).toBe(false); // carried in
    expect(exact('data: 你\n\n')).toBe(true);
    expect(exact(': ping\n\ndata: e\n\n')).toBe(false); // a comment is not forwarded
    expect(exact('id: 1\ndata: f\n\n')).toBe(false); // re-framed
    expect(exact('data: g\n\n\n')).toBe(false); // a stray blank line
    expect(exact(bytes('data: 你\n\n').subarray(0, 8))).toBe(false); // a partial character
    expect(exact(bytes('data: 你\n\n').subarray(8))).toBe(false); // its rest, carried in
    expect(exact('data: h\n\n')).toBe(true);
    expect(exact(Uint8Array.of(...bytes('data: '), 0xff, 10, 10))).toBe(false); // not UTF-8
    expect(exact('data: i\n\n')).toBe(true);
  });

  it('drops a byte order mark only at the very start, however the chunks fall', () => {
    const all = bytes('\uFEFFdata: a\n\n\uFEFFdata: b\n\ndata: \uFEFFc\n\n');
    for (let cut = 1; cut < all.length; cut++) {
      const parser = new SseParser();
      const events = [...parser.push(all.slice(0, cut)), ...parser.push(all.slice(cut)), ...parser.end()];
      // The second block's mark is not a field name anyone knows: that line is ignored.
      expect(events.map((e) => e.data)).toEqual(['a', '\uFEFFc']);
    }
  });
});
