import type { FormatAdapter } from '../../../convert/types.ts';
import {
  geminiEmbedRequestToHub,
  geminiEmbedResponseToHub,
  hubEmbedRequestToGemini,
  hubEmbedResponseToGemini,
} from './embed.ts';
import { geminiErrorBody } from './errors.ts';
import { geminiRequestToHub, hubRequestToGemini } from './request.ts';
import { geminiResponseToHub, hubResponseToGemini } from './response.ts';
import { GeminiToHubStream, HubToGeminiStream } from './stream.ts';

/** Gemini generateContent / streamGenerateContent ⇄ OpenAI chat completions. */
export const geminiAdapter: FormatAdapter = {
  format: 'gemini-generate',
  hub: 'openai-chat',
  requestToHub: geminiRequestToHub,
  requestFromHub: hubRequestToGemini,
  responseToHub: geminiResponseToHub,
  responseFromHub: hubResponseToGemini,
  streamToHub: (ctx) => new GeminiToHubStream(ctx),
  streamFromHub: (ctx) => new HubToGeminiStream(ctx),
  errorBody: geminiErrorBody,
};

const noStream = (): never => {
  throw new Error('embeddings are not streamed');
};

/** Gemini embedContent / batchEmbedContents ⇄ OpenAI embeddings. */
export const geminiEmbedAdapter: FormatAdapter = {
  format: 'gemini-embed',
  hub: 'openai-embeddings',
  requestToHub: geminiEmbedRequestToHub,
  requestFromHub: hubEmbedRequestToGemini,
  responseToHub: geminiEmbedResponseToHub,
  responseFromHub: hubEmbedResponseToGemini,
  streamToHub: noStream,
  streamFromHub: noStream,
  errorBody: geminiErrorBody,
};

export { codeOfGeminiError, geminiErrorBody, geminiStatus, typeForStatus } from './errors.ts';
export { fromGeminiSchema, toGeminiSchema } from './schema.ts';
export { finishFromHub, finishToHub, usageFromHub, usageToHub } from './usage.ts';
