import type { ClientSink } from '../exchange/sink.ts';
import type { SseEvent } from '../sse.ts';
import type { ChannelSnapshot } from '../types.ts';
import type { SecretScrubber } from './scrubber.ts';

/** `"error"` as a JSON string: a quoted word inside generated text never looks like this (it is escaped). */
const ERROR_FIELD = '"error"';
const ERROR_FIELD_BYTES = Buffer.from(ERROR_FIELD);

/**
 * The client's sink with every whole JSON answer and stream event that carries an error (an upstream's
 * in-stream `error` event, an error answered with a 200, or an event the gateway writes when a stream ends
 * badly) scrubbed of secrets. Everything else passes as it is, bytes and all.
 */
export function scrubbingSink(sink: ClientSink, secrets: SecretScrubber, channel: ChannelSnapshot): ClientSink {
  /** Scrubbed text, as JSON when it is JSON (so a mask never breaks its syntax); undefined when nothing was hidden. */
  const scrubText = (text: string): string | undefined => {
    if (secrets.scrub(text, channel) === text) return undefined;
    try {
      return JSON.stringify(secrets.scrubDeep(JSON.parse(text) as unknown, channel));
    } catch {
      return secrets.scrub(text, channel);
    }
  };
  const scrubEvent = (event: SseEvent): SseEvent => {
    if (event.event !== 'error' && !event.data.includes(ERROR_FIELD)) return event;
    const data = scrubText(event.data);
    if (data === undefined) return event;
    return event.event === undefined ? { data } : { event: event.event, data };
  };
  const scrubAnswer = (contentType: string, body: Uint8Array): Uint8Array => {
    const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    if (!contentType.includes('json') || !bytes.includes(ERROR_FIELD_BYTES)) return body;
    const text = scrubText(bytes.toString('utf8'));
    return text === undefined ? body : Buffer.from(text);
  };
  return {
    answer: (status, contentType, body) => sink.answer(status, contentType, scrubAnswer(contentType, body)),
    open: (headers) => sink.open(headers),
    write(events, bytes) {
      // On the hot path: nothing is allocated unless an event had something to hide.
      let scrubbed: SseEvent[] | undefined;
      events.forEach((event, i) => {
        const shown = scrubEvent(event);
        if (shown === event) return;
        scrubbed ??= [...events];
        scrubbed[i] = shown;
      });
      return scrubbed ? sink.write(scrubbed) : sink.write(events, bytes);
    },
    drained: () => sink.drained(),
    ping: () => sink.ping(),
    end: () => sink.end(),
    destroy: () => sink.destroy(),
    onGone: (listener) => sink.onGone(listener),
    get started() {
      return sink.started;
    },
  };
}
