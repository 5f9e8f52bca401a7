import type { FormatAdapter } from '../../../convert/types.ts';
import { claudeErrorBody } from './errors.ts';
import { claudeRequestFromHub, claudeRequestToHub } from './request.ts';
import { claudeResponseFromHub, claudeResponseToHub } from './response.ts';
import { HubToClaudeStream } from './stream-from-hub.ts';
import { ClaudeToHubStream } from './stream-to-hub.ts';

/** Claude Messages (`POST /v1/messages`) ⇄ the OpenAI chat hub. */
export const claudeAdapter: FormatAdapter = {
  format: 'claude-messages',
  hub: 'openai-chat',
  requestToHub: claudeRequestToHub,
  requestFromHub: claudeRequestFromHub,
  responseToHub: claudeResponseToHub,
  responseFromHub: claudeResponseFromHub,
  streamToHub: (ctx) => new ClaudeToHubStream(ctx),
  streamFromHub: (ctx) => new HubToClaudeStream(ctx),
  errorBody: claudeErrorBody,
};

export { claudeErrorBody, claudeErrorType } from './errors.ts';
export { claudeRequestFromHub, claudeRequestToHub } from './request.ts';
export { claudeResponseFromHub, claudeResponseToHub } from './response.ts';
export { HubToClaudeStream } from './stream-from-hub.ts';
export { ClaudeToHubStream } from './stream-to-hub.ts';
