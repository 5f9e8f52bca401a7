import type { WireFormat } from '../types.ts';
import type { Provider, StreamObserver } from './types.ts';
import type { VideoTasks } from './video-tasks.ts';

/** What sets one task-only protocol apart from the others. */
export interface TaskProviderSpec {
  name: string;
  /** The one task format it speaks (video, midjourney, suno). */
  format: WireFormat;
  buildRequest: Provider['buildRequest'];
  parseError: Provider['parseError'];
  video?: VideoTasks;
}

// A task submission is a whole answer, never a stream: nothing to watch.
const NO_STREAM: StreamObserver = { observe() {}, usage: undefined, text: '', toolCalls: 0 };

/**
 * A protocol only the task routes (relay/tasks) speak: its one format natively and nothing converted
 * into it, the body sent as the route made it, billed per call (so no usage is read from answers).
 */
export function taskProvider(spec: TaskProviderSpec): Provider {
  const { format } = spec;
  return {
    name: spec.name,
    formats: new Set<WireFormat>([format]),
    nativeFormat: (asked) => (asked === format ? format : undefined),
    prepareBody: (_format, body, context) => ({ body, upstreamModel: context.upstreamModel }),
    buildRequest: spec.buildRequest,
    video: spec.video,
    usageFromBody: () => undefined,
    streamObserver: () => NO_STREAM,
    parseError: spec.parseError,
  };
}
