import { channelType } from '../../../domain/channels/registry.ts';
import type { Json } from '../../convert/types.ts';
import type { WireFormat } from '../../types.ts';
import type { BuildInput, ProviderContext, UpstreamRequest } from '../types.ts';

/** The audio formats t2a_v2 encodes, with the content type the OpenAI client gets them in. */
export const SPEECH_FORMATS: Readonly<Record<string, string>> = {
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  flac: 'audio/flac',
  pcm: 'audio/pcm',
};

/** An OpenAI speech request as MiniMax's t2a_v2 body (formats it lacks, opus and aac, become mp3). */
export function speechToMinimax(body: Json, model: string): Json {
  const format =
    typeof body.response_format === 'string' && SPEECH_FORMATS[body.response_format] ? body.response_format : 'mp3';
  const voice: Json = { voice_id: String(body.voice ?? '') };
  // MiniMax speaks at 0.5–2× where OpenAI allows 0.25–4×.
  if (typeof body.speed === 'number') voice.speed = Math.min(2, Math.max(0.5, body.speed));
  return { model, text: String(body.input ?? ''), stream: false, voice_setting: voice, audio_setting: { format } };
}

export function prepareMinimaxBody(format: WireFormat, body: Json, context: ProviderContext) {
  const prepared =
    format === 'openai-audio-speech'
      ? speechToMinimax(body, context.upstreamModel)
      : { ...body, model: context.upstreamModel };
  return { body: prepared, upstreamModel: context.upstreamModel };
}

export function buildMinimaxRequest(input: BuildInput): UpstreamRequest {
  const base = (input.channel.baseUrl || channelType(input.channel.type)?.baseUrl || '').replace(/\/+$/, '');
  const path = input.format === 'openai-audio-speech' ? '/v1/t2a_v2' : '/v1/text/chatcompletion_v2';
  return {
    url: `${base}${path}`,
    method: 'POST',
    headers: { authorization: `Bearer ${input.key}`, 'content-type': 'application/json' },
    body: input.body,
  };
}
