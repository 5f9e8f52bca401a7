import type { WireFormat } from '../../types.ts';
import { jsonAnswerText, providerAnswer } from '../answer.ts';
import { OpenAIStreamObserver } from '../openai/stream.ts';
import { openAIUsage } from '../openai/usage.ts';
import type { Provider } from '../types.ts';
import { minimaxErrorStatus, minimaxFailure, parseMinimaxError } from './errors.ts';
import { buildMinimaxRequest, prepareMinimaxBody, SPEECH_FORMATS } from './request.ts';
import { MinimaxStreamDecoder } from './stream.ts';
import { hailuoVideo } from './video.ts';

const CHAT_LIKE: ReadonlySet<WireFormat> = new Set<WireFormat>([
  'openai-chat',
  'openai-responses',
  'claude-messages',
  'gemini-generate',
]);

/**
 * MiniMax (channel type 35): chatcompletion_v2, OpenAI-shaped but failing with HTTP 200 and a
 * `base_resp`, t2a_v2 speech, whose hex-encoded audio the OpenAI speech client gets as bytes, and
 * Hailuo video generation for the video routes.
 */
export const minimaxProvider: Provider = {
  name: 'minimax',
  formats: new Set<WireFormat>(['openai-chat', 'openai-audio-speech', 'video']),
  nativeFormat: (format) =>
    format === 'openai-audio-speech' || format === 'video' ? format : CHAT_LIKE.has(format) ? 'openai-chat' : undefined,
  prepareBody: prepareMinimaxBody,
  buildRequest: buildMinimaxRequest,
  async send(request, { transport, signal }) {
    const response = await transport.send(request, signal);
    const text = await jsonAnswerText(response);
    if (text === undefined) return response;
    const failure = minimaxFailure(text);
    if (failure) return providerAnswer(minimaxErrorStatus(failure.code), 'application/json', Buffer.from(text));
    if (response.status < 400 && request.url.endsWith('/t2a_v2')) return speechAnswer(text);
    return providerAnswer(response.status, 'application/json', Buffer.from(text));
  },
  streamDecoder: (contentType) => (contentType.includes('text/event-stream') ? new MinimaxStreamDecoder() : undefined),
  usageFromBody: (format, body) => (format === 'openai-chat' ? openAIUsage(format, body) : undefined),
  streamObserver: (format) => new OpenAIStreamObserver(format),
  parseError: parseMinimaxError,
  video: hailuoVideo,
};

/** t2a_v2's `data.audio` (hex) as the audio bytes, typed by `extra_info.audio_format`. */
function speechAnswer(text: string) {
  const body = JSON.parse(text) as { data?: { audio?: unknown }; extra_info?: { audio_format?: unknown } };
  const hex = typeof body.data?.audio === 'string' ? body.data.audio : '';
  const format = typeof body.extra_info?.audio_format === 'string' ? body.extra_info.audio_format : 'mp3';
  return providerAnswer(200, SPEECH_FORMATS[format] ?? 'application/octet-stream', Buffer.from(hex, 'hex'));
}
