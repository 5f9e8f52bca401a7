import type { UpstreamAdapter } from '../../../convert/types.ts';
import { hubRequestToConverse } from './request.ts';
import { converseResponseToHub } from './response.ts';
import { ConverseToHubStream } from './stream.ts';

/** Bedrock Converse / ConverseStream, an upstream-only format, from and back to OpenAI chat. */
export const converseAdapter: UpstreamAdapter = {
  format: 'bedrock-converse',
  hub: 'openai-chat',
  requestFromHub: hubRequestToConverse,
  responseToHub: converseResponseToHub,
  streamToHub: (ctx) => new ConverseToHubStream(ctx),
};
