import type { UpstreamAdapter } from '../../../convert/types.ts';
import { hubRequestToTencent } from './request.ts';
import { tencentResponseToHub } from './response.ts';
import { TencentToHubStream } from './stream.ts';

/** Hunyuan's ChatCompletions (API 2023-09-01), spoken only upstream: from the hub and back. */
export const tencentChatAdapter: UpstreamAdapter = {
  format: 'tencent-chat',
  hub: 'openai-chat',
  requestFromHub: hubRequestToTencent,
  responseToHub: tencentResponseToHub,
  streamToHub: (ctx) => new TencentToHubStream(ctx),
};
