import type { WireFormat } from '../../types.ts';
import { CHAT_FORMATS } from '../hub-request.ts';
import type { Provider } from '../types.ts';
import { parseReplicateError } from './errors.ts';
import { buildReplicateRequest } from './request.ts';
import { sendReplicate } from './send.ts';
import { ReplicateStreamObserver } from './stream.ts';
import { replicateUsage } from './usage.ts';

/** Replicate predictions: language models (streamed through the prediction's stream URL) and image models. */
export const replicateProvider: Provider = {
  name: 'replicate',
  formats: new Set<WireFormat>(['replicate-chat', 'replicate-images']),
  nativeFormat: (format) => {
    if (format === 'openai-images' || format === 'replicate-images') return 'replicate-images';
    return format === 'replicate-chat' || CHAT_FORMATS.has(format) ? 'replicate-chat' : undefined;
  },
  prepareBody: (_format, body, context) => ({ body, upstreamModel: context.upstreamModel }),
  buildRequest: buildReplicateRequest,
  send: (request, input) => sendReplicate(request, input),
  usageFromBody: (format, body) => (format === 'replicate-chat' ? replicateUsage(body) : undefined),
  streamObserver: () => new ReplicateStreamObserver(),
  parseError: parseReplicateError,
};
