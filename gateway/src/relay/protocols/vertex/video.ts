import type { ChannelSnapshot } from '../../types.ts';
import { filteredReason, type VeoFinished, veoVideo } from '../gemini/veo.ts';
import type { UpstreamRequest } from '../types.ts';
import { jsonRecord, type VideoBytes, type VideoTaskRef, type VideoTasks } from '../video-tasks.ts';
import { credentialsOf, publisherModelUrl } from './request.ts';

/** `projects/{p}/locations/{region}/publishers/google/models/{model}/operations/{id}`: where the task was made. */
const OPERATION = /\/locations\/([a-z0-9-]+)\/publishers\/google\/models\/([^/]+)\/operations\//;

interface VertexVideo {
  bytesBase64Encoded?: unknown;
  gcsUri?: unknown;
  mimeType?: unknown;
}

const videosOf = (response: Record<string, unknown>): VertexVideo[] =>
  Array.isArray(response.videos) ? (response.videos as VertexVideo[]) : [];

/** A model method, with the API key in `x-goog-api-key` in express mode (the access token is added when sent). */
function modelRequest(
  channel: ChannelSnapshot,
  key: string,
  target: { model: string; method: string; region?: string },
  body: string,
): UpstreamRequest {
  const credentials = credentialsOf(key);
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if ('apiKey' in credentials) headers['x-goog-api-key'] = credentials.apiKey;
  return {
    url: publisherModelUrl(channel, credentials, { publisher: 'google', ...target }),
    method: 'POST',
    headers,
    body,
  };
}

/** fetchPredictOperation for a task, in the region and on the model its operation name says. */
function fetchOperation(channel: ChannelSnapshot, key: string, task: VideoTaskRef): UpstreamRequest {
  const located = OPERATION.exec(task.upstreamId);
  const model = located?.[2] ?? task.upstreamModel.replace(/^models\//, '');
  return modelRequest(
    channel,
    key,
    { model, method: 'fetchPredictOperation', ...(located ? { region: located[1]! } : {}) },
    JSON.stringify({ operationName: task.upstreamId }),
  );
}

/** Without a storageUri the videos come back inline; nothing of them is kept in the task row. */
function finished(response: Record<string, unknown>): VeoFinished {
  const [video] = videosOf(response);
  const kept = typeof video?.bytesBase64Encoded === 'string' || typeof video?.gcsUri === 'string';
  return kept ? {} : { failure: filteredReason(response) };
}

/**
 * The video's bytes from the finished operation, fetched again when the owner asks for them rather
 * than kept in the database (a clip is megabytes of base64; the operation keeps it for us).
 */
function contentBytes(body: string): VideoBytes | string {
  const response = jsonRecord(body)?.response;
  const [video] = videosOf(
    typeof response === 'object' && response !== null ? (response as Record<string, unknown>) : {},
  );
  if (typeof video?.bytesBase64Encoded === 'string') {
    const type = typeof video.mimeType === 'string' && video.mimeType !== '' ? video.mimeType : 'video/mp4';
    return { type, bytes: Buffer.from(video.bytesBase64Encoded, 'base64') };
  }
  if (typeof video?.gcsUri === 'string') return `the video was written to Cloud Storage at ${video.gcsUri}`;
  return 'the operation holds no video';
}

/**
 * Veo on Vertex AI (type 41): `predictLongRunning` and `fetchPredictOperation` on Google's publisher
 * model, authorized as the protocol's other requests are (a service account's access token, added by
 * `send`; an API key in express mode).
 */
export function vertexVideo(send: NonNullable<VideoTasks['send']>): VideoTasks {
  return veoVideo({
    gcsImages: true,
    submitRequest: (channel, key, model, body) =>
      modelRequest(channel, key, { model, method: 'predictLongRunning' }, body),
    queryRequest: fetchOperation,
    finished,
    content: (channel, key, task, variant) => (variant === 'video' ? fetchOperation(channel, key, task) : undefined),
    contentBytes,
    send,
  });
}
