import type { ChannelSnapshot } from '../../types.ts';
import { GEMINI_BASE_URL } from './request.ts';
import { filteredReason, type VeoFinished, veoVideo } from './veo.ts';

/** Veo is served under v1beta only. */
const VERSION = 'v1beta';

const baseOf = (channel: Pick<ChannelSnapshot, 'baseUrl'>) => (channel.baseUrl || GEMINI_BASE_URL).replace(/\/+$/, '');

const keyHeader = (key: string) => ({ 'x-goog-api-key': key, accept: 'application/json' });

/** A video URI without any `key` parameter: what the task row keeps and clients may see; undefined when it is no URL. */
export function withoutKey(uri: string): string | undefined {
  if (!URL.canParse(uri)) return undefined;
  const url = new URL(uri);
  url.searchParams.delete('key');
  return url.toString();
}

/** The finished video's file URI (`…/files/{id}:download?alt=media`), which only the key may download. */
function finished(response: Record<string, unknown>): VeoFinished {
  const generated = response.generateVideoResponse as { generatedSamples?: Array<{ video?: { uri?: unknown } }> };
  const uri = generated?.generatedSamples?.[0]?.video?.uri;
  if (typeof uri !== 'string' || uri === '') {
    return { failure: filteredReason((generated ?? {}) as Record<string, unknown>) };
  }
  const url = withoutKey(uri);
  return url ? { url } : {};
}

/**
 * Veo on Google's Gemini API (type 24), with the channel's API key in `x-goog-api-key`: submitted to
 * `{base}/v1beta/models/{model}:predictLongRunning`, polled at `{base}/v1beta/{operation}`. The
 * video's URI needs the key too, so the gateway downloads it for the owner: the URI's path on the
 * channel's own host, with the key, so the key never goes anywhere the channel does not point.
 */
export const geminiVideo = veoVideo({
  gcsImages: false,
  submitRequest: (channel, key, model, body) => ({
    url: `${baseOf(channel)}/${VERSION}/models/${encodeURIComponent(model)}:predictLongRunning`,
    method: 'POST',
    headers: { ...keyHeader(key), 'content-type': 'application/json' },
    body,
  }),
  queryRequest: (channel, key, task) => ({
    url: `${baseOf(channel)}/${VERSION}/${task.upstreamId.split('/').map(encodeURIComponent).join('/')}`,
    method: 'GET',
    headers: keyHeader(key),
  }),
  finished,
  content(channel, key, task, variant) {
    if (variant !== 'video' || !task.url || !URL.canParse(task.url)) return undefined;
    const uri = new URL(task.url);
    return {
      url: `${baseOf(channel)}${uri.pathname}${uri.search}`,
      method: 'GET',
      headers: { 'x-goog-api-key': key },
    };
  },
});
