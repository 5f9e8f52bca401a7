import type { ChannelSnapshot } from '../../types.ts';
import { keyParts } from '../key-parts.ts';
import type { UpstreamRequest } from '../types.ts';
import { channelBase, isRecord, videoImages } from '../video-fields.ts';
import {
  jsonRecord,
  type RefusalDetail,
  refusalOf,
  type VideoAccepted,
  type VideoJob,
  type VideoPlan,
  type VideoRefusal,
  type VideoState,
  type VideoTasks,
} from '../video-tasks.ts';
import { volcSign } from './sign.ts';

/** The visual API's version and the credential scope its signatures name. */
export const JIMENG_VERSION = '2022-08-31';
export const JIMENG_REGION = 'cn-north-1';
export const JIMENG_SERVICE = 'cv';
export const SUBMIT_ACTION = 'CVSync2AsyncSubmitTask';
export const RESULT_ACTION = 'CVSync2AsyncGetResult';
/** The visual API's success code. */
export const JIMENG_OK = 10000;

/** Jimeng renders 24 frames a second plus one: 121 frames are 5 s, 241 are 10 s. */
const FRAMES_BY_SECONDS: Record<string, number> = { '5': 121, '10': 241 };
export const JIMENG_ASPECT_RATIOS = ['16:9', '4:3', '1:1', '3:4', '9:16', '21:9'] as const;
const DEFAULT_ASPECT_RATIO = '16:9';
/** Codes that say "not now" (QPS or concurrency limits, an internal error): a status query is asked again later. */
const TRANSIENT_CODES = new Set([50429, 50430, 50500, 50501]);

const strings = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((item) => typeof item === 'string' && item !== '');

export interface JimengParams {
  seconds: string;
  frames: number;
  aspectRatio: string;
  seed: number;
  imageUrls?: string[];
  binaryDataBase64?: string[];
}

/**
 * The submission's parameters from the generic API's fields (seconds, aspect_ratio, image/images,
 * metadata) or the visual API's own (frames, seed, image_urls, binary_data_base64); an error message
 * when Jimeng would refuse them.
 */
export function jimengParams(fields: Record<string, unknown>): JimengParams | string {
  const metadata = isRecord(fields.metadata) ? fields.metadata : {};
  const field = (name: string) => fields[name] ?? metadata[name];
  let seconds = field('seconds') === undefined ? undefined : String(field('seconds'));
  const frames = field('frames');
  if (frames !== undefined) {
    const fromFrames = Object.keys(FRAMES_BY_SECONDS).find((s) => FRAMES_BY_SECONDS[s] === Number(frames));
    if (!fromFrames) return 'frames must be 121 (5 seconds) or 241 (10 seconds)';
    if (seconds !== undefined && seconds !== fromFrames) return 'frames and seconds disagree';
    seconds = fromFrames;
  }
  seconds ??= '5';
  const frameCount = FRAMES_BY_SECONDS[seconds];
  if (frameCount === undefined) return 'duration must be 5 or 10 seconds';
  const aspectRatio = String(field('aspect_ratio') ?? DEFAULT_ASPECT_RATIO);
  if (!(JIMENG_ASPECT_RATIOS as readonly string[]).includes(aspectRatio)) {
    return `aspect_ratio must be one of ${JIMENG_ASPECT_RATIOS.join(', ')}`;
  }
  const seed = field('seed') === undefined ? -1 : Number(field('seed'));
  if (!Number.isInteger(seed) || seed < -1) return 'seed must be an integer, -1 for a random one';
  const params: JimengParams = { seconds, frames: frameCount, aspectRatio, seed };
  const urls = field('image_urls');
  const binary = field('binary_data_base64');
  if (urls !== undefined || binary !== undefined) {
    if (urls !== undefined && !strings(urls)) return 'image_urls must be a list of URLs';
    if (binary !== undefined && !strings(binary)) return 'binary_data_base64 must be a list of base64 images';
    return { ...params, ...(urls ? { imageUrls: urls } : {}), ...(binary ? { binaryDataBase64: binary } : {}) };
  }
  const images = videoImages(fields);
  if (typeof images === 'string') return images;
  if (images.length === 0) return params;
  // URLs go as image_urls; inline images as bare base64 (a data: URL's prefix is not Jimeng's).
  if (images.every((image) => /^https?:\/\//.test(image))) return { ...params, imageUrls: images };
  return { ...params, binaryDataBase64: images.map((image) => image.replace(/^data:[^,]*;base64,/, '')) };
}

/** `{base}/?Action=…&Version=2022-08-31`. */
export const jimengUrl = (channel: Pick<ChannelSnapshot, 'baseUrl' | 'type'>, action: string) =>
  `${channelBase(channel)}/?Action=${action}&Version=${JIMENG_VERSION}`;

/** A visual API call signed with the channel's `AccessKeyID|SecretAccessKey`. */
export function signedJimengRequest(
  channel: Pick<ChannelSnapshot, 'baseUrl' | 'type'>,
  key: string,
  action: string,
  payload: Record<string, unknown> | string,
  now = new Date(),
): UpstreamRequest {
  const [accessKey = '', secretKey = ''] = keyParts(channel.type, key);
  const url = jimengUrl(channel, action);
  const body = typeof payload === 'string' ? payload : JSON.stringify(payload);
  const headers = { 'content-type': 'application/json' };
  const signed = volcSign({
    accessKey,
    secretKey,
    region: JIMENG_REGION,
    service: JIMENG_SERVICE,
    method: 'POST',
    url: new URL(url),
    headers,
    body,
    now,
  });
  return { url, method: 'POST', headers: { ...headers, accept: 'application/json', ...signed }, body };
}

/** The visual API's code and message, from its body or the gateway-level `ResponseMetadata.Error`. */
function jimengError(body: string): { code: string; number?: number; message: string } | undefined {
  const answer = jsonRecord(body);
  if (!answer) return undefined;
  const meta = isRecord(answer.ResponseMetadata) ? answer.ResponseMetadata : undefined;
  const error = isRecord(meta?.Error) ? meta.Error : undefined;
  if (error) return { code: String(error.Code ?? 'upstream_error'), message: String(error.Message ?? '') };
  if (typeof answer.code !== 'number') return undefined;
  return { code: String(answer.code), number: answer.code, message: String(answer.message ?? '') };
}

/** Where a refused submission's own code says what kind of refusal it is, the status follows it. */
function jimengRefusalDetail(body: string): RefusalDetail | undefined {
  const error = jimengError(body);
  if (!error) return undefined;
  const code = error.number;
  const status = code === 50429 || code === 50430 ? 429 : code !== undefined && code >= 50500 ? 502 : 400;
  return { code: error.code, message: error.message, status };
}

/** A GetResult answer in the gateway's statuses; undefined when it says nothing about the task (yet). */
export function readJimengResult(status: number, body: string): VideoState | undefined {
  const answer = jsonRecord(body);
  const error = jimengError(body);
  if (!answer || !error) return undefined;
  if (error.number !== JIMENG_OK) {
    // A limit or an outage is no verdict on the task; a signature error is the channel's, not the task's.
    if (error.number === undefined || TRANSIENT_CODES.has(error.number) || status >= 500) return undefined;
    return { status: 'FAILURE', progress: '100%', failReason: error.message || `Jimeng code ${error.number}` };
  }
  const data = isRecord(answer.data) ? answer.data : {};
  switch (data.status) {
    case 'in_queue':
      return { status: 'QUEUED', progress: '10%', failReason: '' };
    case 'generating':
      return { status: 'IN_PROGRESS', progress: '50%', failReason: '' };
    case 'done':
      return {
        status: 'SUCCESS',
        progress: '100%',
        failReason: '',
        ...(typeof data.video_url === 'string' && data.video_url !== '' ? { url: data.video_url } : {}),
      };
    case 'not_found':
    case 'expired':
      return { status: 'FAILURE', progress: '100%', failReason: `the task is ${data.status} upstream` };
    default:
      return undefined;
  }
}

/**
 * Jimeng on Volcengine's visual API (type 51): `CVSync2AsyncSubmitTask` with the model as `req_key`,
 * then `CVSync2AsyncGetResult` with the same `req_key` and the task id until done, every call signed
 * with HMAC-SHA256 (sign.ts). Billed per call, as new-api bills it: no ratios.
 */
export const jimengVideo: VideoTasks = {
  plan(job: VideoJob): VideoPlan | string {
    const params = jimengParams(job.fields);
    if (typeof params === 'string') return params;
    return { ratios: {}, seconds: params.seconds, size: params.aspectRatio };
  },

  async submit(channel, key, job) {
    const params = jimengParams(job.fields);
    if (typeof params === 'string') throw new Error(params);
    return signedJimengRequest(channel, key, SUBMIT_ACTION, {
      req_key: job.upstreamModel,
      prompt: job.prompt,
      seed: params.seed,
      aspect_ratio: params.aspectRatio,
      frames: params.frames,
      ...(params.imageUrls ? { image_urls: params.imageUrls } : {}),
      ...(params.binaryDataBase64 ? { binary_data_base64: params.binaryDataBase64 } : {}),
    });
  },

  accepted(status, body): VideoAccepted | VideoRefusal {
    const answer = jsonRecord(body);
    const data = isRecord(answer?.data) ? answer.data : undefined;
    if (status !== 200 || answer?.code !== JIMENG_OK || typeof data?.task_id !== 'string' || data.task_id === '') {
      return refusalOf(status, body, jimengRefusalDetail);
    }
    return { id: data.task_id, state: { status: 'SUBMITTED', progress: '0%', failReason: '' } };
  },

  async query(channel, key, task) {
    return signedJimengRequest(channel, key, RESULT_ACTION, { req_key: task.upstreamModel, task_id: task.upstreamId });
  },

  state: readJimengResult,
};
