import type { UpstreamAdapter } from '../../../convert/types.ts';
import { hubRequestToSpark } from './request.ts';
import { sparkResponseToHub } from './response.ts';
import { SparkToHubStream } from './stream.ts';

/** Spark's WebSocket frames (request frame out, answer frames back), spoken only upstream. */
export const xunfeiChatAdapter: UpstreamAdapter = {
  format: 'xunfei-chat',
  hub: 'openai-chat',
  requestFromHub: hubRequestToSpark,
  responseToHub: sparkResponseToHub,
  streamToHub: (ctx) => new SparkToHubStream(ctx),
};
