import type { WireFormat } from '../../types.ts';
import type { Provider } from '../types.ts';
import { parseGeminiError } from './errors.ts';
import { prepareGeminiBody } from './prepare.ts';
import { buildGeminiRequest } from './request.ts';
import { GeminiStreamObserver } from './stream.ts';
import { geminiUsage } from './usage.ts';
import { geminiVideo } from './video.ts';

const FORMATS: ReadonlySet<WireFormat> = new Set<WireFormat>(['gemini-generate', 'gemini-embed']);

/** What each client format is sent to Gemini as (chat-like formats by way of the hub). */
const NATIVE: Partial<Record<WireFormat, WireFormat>> = {
  'gemini-generate': 'gemini-generate',
  'openai-chat': 'gemini-generate',
  'openai-responses': 'gemini-generate',
  'claude-messages': 'gemini-generate',
  'gemini-embed': 'gemini-embed',
  'openai-embeddings': 'gemini-embed',
};

/** Google's Gemini API (channel type 24): generateContent, streamGenerateContent, embeddings, Veo videos. */
export const geminiProvider: Provider = {
  name: 'gemini',
  formats: FORMATS,
  nativeFormat: (format) => NATIVE[format],
  prepareBody: prepareGeminiBody,
  buildRequest: buildGeminiRequest,
  usageFromBody: geminiUsage,
  streamObserver: () => new GeminiStreamObserver(),
  parseError: parseGeminiError,
  video: geminiVideo,
};

export { parseGeminiError } from './errors.ts';
export {
  HARM_CATEGORIES,
  MAX_THINKING_BUDGET,
  prepareGeminiBody,
  SKIP_SIGNATURE,
  safetySettings,
  thinkingFromSuffix,
} from './prepare.ts';
export { apiVersion, buildGeminiRequest, GEMINI_BASE_URL } from './request.ts';
export { GeminiStreamObserver } from './stream.ts';
export { geminiUsage, usageFromMetadata } from './usage.ts';
