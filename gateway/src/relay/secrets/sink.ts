import type { ClientSink } from '../exchange/sink.ts';
import type { SseEvent } from '../sse.ts';
import type { ChannelSnapshot } from '../types.ts';
import type { SecretScrubber } from './scrubber.ts';

/**
 * The client's sink with every stream event that carries an error (an upstream's in-stream `error` event,
 * or one the gateway writes when a stream ends badly) scrubbed of secrets. Other events pass as they are:
 * `"error"` is looked for as a JSON string, which a quoted word inside generated text never is (escaped).
 */
export function scrubbingSink(sink: ClientSink, secrets: SecretScrubber, channel: ChannelSnapshot): ClientSink {
  const scrubEvent = (event: SseEvent): SseEvent => {
    if (event.event !== 'error' && !event.data.includes('"error"')) return event;
    const data = secrets.scrub(event.data, channel);
    if (data === event.data) return event;
    return { ...(event.event === undefined ? {} : { event: event.event }), data: scrubJson(event.data) ?? data };
  };
  const scrubJson = (data: string): string | undefined => {
    try {
      return JSON.stringify(secrets.scrubDeep(JSON.parse(data) as unknown, channel));
    } catch {
      return undefined;
    }
  };
  return {
    answer: (status, contentType, body) => sink.answer(status, contentType, body),
    open: (headers) => sink.open(headers),
    write(events, bytes) {
      const scrubbed = events.map(scrubEvent);
      const changed = scrubbed.some((event, i) => event !== events[i]);
      return changed ? sink.write(scrubbed) : sink.write(events, bytes);
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
