import type { Json } from '../../../convert/types.ts';
import { asObject, asString, field, mimeFromUrl, parseDataUrl } from './fields.ts';

/**
 * Media parts between the two formats: Gemini's inlineData (base64 with a media type) is a data: URL
 * in the hub (image_url for images, input_audio for wav/mp3, file for documents); fileData (a URI)
 * is an image_url with that URI.
 */

const AUDIO_FORMATS: Record<string, string> = {
  'audio/wav': 'wav',
  'audio/x-wav': 'wav',
  'audio/wave': 'wav',
  'audio/mp3': 'mp3',
  'audio/mpeg': 'mp3',
};

/** One Gemini media part as a hub content part; undefined when the part holds no media. */
export function mediaPartToHub(part: Json): Json | undefined {
  const inline = asObject(field(part, 'inlineData'));
  if (inline) {
    const mimeType = asString(field(inline, 'mimeType')) ?? 'application/octet-stream';
    const data = asString(inline.data) ?? '';
    if (mimeType.startsWith('image/')) {
      return { type: 'image_url', image_url: { url: `data:${mimeType};base64,${data}` } };
    }
    const audio = AUDIO_FORMATS[mimeType];
    if (audio) return { type: 'input_audio', input_audio: { data, format: audio } };
    const extension = mimeType.split('/')[1]?.replace(/[^a-z0-9]/gi, '') || 'bin';
    const filename = asString(field(inline, 'displayName')) ?? `file.${extension}`;
    return { type: 'file', file: { filename, file_data: `data:${mimeType};base64,${data}` } };
  }
  const file = asObject(field(part, 'fileData'));
  if (file) {
    const uri = asString(field(file, 'fileUri')) ?? '';
    return { type: 'image_url', image_url: { url: uri } };
  }
  return undefined;
}

/** One hub content part as a Gemini part; undefined for part types Gemini cannot take. */
export function hubPartToGemini(part: unknown): Json | undefined {
  const item = asObject(part);
  if (!item) return typeof part === 'string' ? { text: part } : undefined;
  switch (item.type) {
    case 'text':
    case 'input_text':
      return typeof item.text === 'string' ? { text: item.text } : undefined;
    case 'image_url': {
      const url = asString(item.image_url) ?? asString(asObject(item.image_url)?.url);
      return url === undefined ? undefined : urlToPart(url);
    }
    case 'input_audio': {
      const audio = asObject(item.input_audio);
      const format = asString(audio?.format) ?? 'wav';
      return { inlineData: { mimeType: `audio/${format}`, data: asString(audio?.data) ?? '' } };
    }
    case 'file': {
      const file = asObject(item.file);
      const data = asString(file?.file_data);
      if (data !== undefined) {
        const parsed = parseDataUrl(data);
        if (parsed) return { inlineData: parsed };
        const filename = asString(file?.filename) ?? '';
        return { inlineData: { mimeType: mimeFromUrl(filename) ?? 'application/pdf', data } };
      }
      const id = asString(file?.file_id);
      return id === undefined ? undefined : { fileData: { fileUri: id } };
    }
    default:
      return undefined;
  }
}

/** A URL (data: or remote) as an inlineData or fileData part. */
export function urlToPart(url: string): Json {
  const inline = parseDataUrl(url);
  if (inline) return { inlineData: inline };
  const mimeType = mimeFromUrl(url);
  return { fileData: mimeType ? { mimeType, fileUri: url } : { fileUri: url } };
}
