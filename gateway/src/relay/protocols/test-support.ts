import type { Json } from '../convert/types.ts';
import { type SseEvent, SseParser } from '../sse.ts';
import type { Transport, UpstreamResponse } from '../transport.ts';
import type { ChannelSnapshot } from '../types.ts';
import { wholeOf } from '../whole-answer.ts';
import type { UpstreamRequest } from './types.ts';

/** Helpers for the protocol folders' unit tests (not used by the gateway). */

export function testChannel(partial: Partial<ChannelSnapshot>): ChannelSnapshot {
  return {
    id: 1,
    type: 1,
    name: 'c',
    status: 1,
    baseUrl: '',
    keys: ['k'],
    multiKeyMode: 'random',
    models: [],
    groups: [],
    priority: 0,
    weight: 0,
    tag: null,
    autoBan: true,
    other: '',
    openaiOrganization: null,
    testModel: null,
    ...partial,
  };
}

/** Parses SSE text fed in chunks of `size` bytes (cutting lines and UTF-8 characters apart). */
export function eventsOf(text: string, size: number): SseEvent[] {
  const bytes = Buffer.from(text, 'utf8');
  const parser = new SseParser();
  const events: SseEvent[] = [];
  for (let at = 0; at < bytes.length; at += size) events.push(...parser.push(bytes.subarray(at, at + size)));
  return [...events, ...parser.end()];
}

/** The JSON data of hub chunks. */
export const chunksOf = (events: SseEvent[]): Json[] => events.map((e) => JSON.parse(e.data) as Json);

/** A transport answering from a script, recording what it was asked. */
export function fakeTransport(answer: (request: UpstreamRequest) => UpstreamResponse | Promise<UpstreamResponse>) {
  const sent: UpstreamRequest[] = [];
  const send = async (request: UpstreamRequest) => {
    sent.push(request);
    return answer(request);
  };
  // A non-streaming call reads the scripted answer whole, as the real transport's sendWhole does.
  const transport = {
    send,
    sendWhole: async (request: UpstreamRequest) => wholeOf(await send(request)),
  } as unknown as Transport;
  return { transport, sent };
}
