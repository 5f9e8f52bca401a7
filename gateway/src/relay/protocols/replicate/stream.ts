import type { SseEvent } from '../../sse.ts';
import type { Usage } from '../../types.ts';
import type { StreamObserver } from '../types.ts';
import { eventJson } from '../upstream-json.ts';
import { replicateUsage } from './usage.ts';

/**
 * The event Tollgate appends to a prediction's stream once it is done: the finished prediction, for
 * its metrics (Replicate's stream itself has only output, done and error events).
 */
export const PREDICTION_EVENT = 'prediction';

/** Reads a prediction stream: text from output events, usage from the appended prediction. */
export class ReplicateStreamObserver implements StreamObserver {
  usage: Usage | undefined;
  text = '';
  readonly toolCalls = 0;

  observe(event: SseEvent): void {
    if (event.event === 'output') this.text += event.data;
    else if (event.event === PREDICTION_EVENT) this.usage = replicateUsage(eventJson(event)) ?? this.usage;
  }
}
