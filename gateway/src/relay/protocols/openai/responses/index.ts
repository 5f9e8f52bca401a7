import type { FormatAdapter } from '../../../convert/types.ts';
import { openAIError } from '../../../openai-error.ts';
import { chatRequestToResponses, responsesRequestToChat } from './request.ts';
import { chatResponseToResponses, responsesResponseToChat } from './response.ts';
import { chatStreamToResponses } from './stream-from-hub.ts';
import { responsesStreamToChat } from './stream-to-hub.ts';

export { ResponsesConversionError } from './common.ts';

/**
 * OpenAI Responses ⇄ the chat-completions hub, both ways: a Responses client reaching a chat-only upstream
 * (Claude, Gemini, an OpenAI-compatible one), and a chat client reaching a Responses-only upstream. What each
 * direction keeps and drops is written beside each conversion (request.ts, response.ts, stream-*.ts).
 */
export const responsesAdapter: FormatAdapter = {
  format: 'openai-responses',
  hub: 'openai-chat',
  requestToHub: responsesRequestToChat,
  requestFromHub: chatRequestToResponses,
  responseToHub: responsesResponseToChat,
  responseFromHub: chatResponseToResponses,
  streamToHub: responsesStreamToChat,
  streamFromHub: chatStreamToResponses,
  errorBody: (error) => ({ ...openAIError(error.message, error.type, error.code) }),
};
