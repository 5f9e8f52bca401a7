import type { ChannelSnapshot } from '../../types.ts';
import type { UpstreamRequest } from '../types.ts';
import { isRecord } from '../video-fields.ts';
import {
  jsonPost,
  jsonRecord,
  percent,
  type RefusalDetail,
  refusalOf,
  type VideoAccepted,
  type VideoJob,
  type VideoPlan,
  type VideoRefusal,
  type VideoState,
  type VideoStatus,
  type VideoTasks,
} from '../video-tasks.ts';
import { klingHeaders } from './jwt.ts';

/** The task's action as the row keeps it; it names the Kling endpoint its queries go to. */
export const TEXT2VIDEO = 'TEXT2VIDEO';
export const IMAGE2VIDEO = 'IMAGE2VIDEO';

const MODES = ['std', 'pro'];
/** Kling's own defaults, sent explicitly so the video object shows what is rendered. */
const DEFAULT_MODE = 'std';
const DEFAULT_DURATION = '5';
const DEFAULT_ASPECT_RATIO = '16:9';
/** The frame sizes of the generic API Kling can render, as its aspect ratios. */
const ASPECT_OF_SIZE: Record<string, string> = { '16:9': '16:9', '9:16': '9:16', '1:1': '1:1' };

/**
 * The fields Kling's two endpoints document, the only ones sent. `callback_url` is left out on purpose:
 * the gateway polls, and a callback would hand the client the upstream's task id.
 */
const SHARED_FIELDS = [
  'negative_prompt',
  'cfg_scale',
  'mode',
  'duration',
  'camera_control',
  'sound',
  'watermark_info',
  'external_task_id',
];
const FIELDS: Record<string, readonly string[]> = {
  [TEXT2VIDEO]: [...SHARED_FIELDS, 'aspect_ratio'],
  [IMAGE2VIDEO]: [...SHARED_FIELDS, 'image', 'image_tail', 'static_mask', 'dynamic_masks', 'voice_list'],
};

const given = (value: unknown) => value !== undefined && value !== null && value !== '';

/** A Kling image is a URL or bare base64: a data URL loses its `data:…;base64,` prefix, which Kling refuses. */
function klingImage(value: unknown): unknown {
  return typeof value === 'string' ? value.replace(/^data:[^;,]*;base64,/, '') : value;
}

/** `WxH` (or the ratio itself) as Kling's aspect ratio, undefined when it is none Kling renders. */
function aspectOfSize(size: string): string | undefined {
  if (ASPECT_OF_SIZE[size]) return ASPECT_OF_SIZE[size];
  const match = /^(\d+)x(\d+)$/.exec(size);
  if (!match) return undefined;
  const [w, h] = [Number(match[1]), Number(match[2])];
  if (w === 0 || h === 0) return undefined;
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  const d = gcd(w, h);
  return ASPECT_OF_SIZE[`${w / d}:${h / d}`];
}

export interface KlingRequest {
  action: typeof TEXT2VIDEO | typeof IMAGE2VIDEO;
  body: Record<string, unknown>;
}

/**
 * The Kling request for a job, or why Kling would refuse it. The fields are Kling's own (the /kling
 * route's body) or the generic API's (`seconds` from `duration`, `size` as an aspect ratio, `image` or
 * the first of `images`), with `metadata`'s Kling fields over them as new-api does; the model is always
 * the priced one. The generic API's GENERATE is image2video when an image came, else text2video.
 */
export function klingRequest(job: VideoJob): KlingRequest | string {
  const { fields } = job;
  const metadata = isRecord(fields.metadata) ? fields.metadata : {};
  const source: Record<string, unknown> = { ...fields, ...metadata };
  if (!given(source.image) && Array.isArray(fields.images) && given(fields.images[0])) source.image = fields.images[0];
  const hasImage = given(source.image) || given(source.image_tail);
  const action =
    job.action === TEXT2VIDEO || job.action === IMAGE2VIDEO ? job.action : hasImage ? IMAGE2VIDEO : TEXT2VIDEO;
  if (action === IMAGE2VIDEO && !hasImage) return 'image or image_tail is required for image2video';

  const mode = given(source.mode) ? String(source.mode) : DEFAULT_MODE;
  if (!MODES.includes(mode)) return 'mode must be std or pro';
  const length = given(metadata.duration) ? metadata.duration : (fields.duration ?? fields.seconds);
  const duration = given(length) ? String(length) : DEFAULT_DURATION;
  if (!/^[1-9]\d*$/.test(duration)) return 'duration must be a whole number of seconds, such as 5 or 10';

  const body: Record<string, unknown> = { model_name: job.upstreamModel };
  for (const name of FIELDS[action]!) if (given(source[name])) body[name] = source[name];
  // The prompt is the one createVideo read (optional for image2video, which may animate an image alone).
  if (job.prompt !== '') body.prompt = job.prompt;
  Object.assign(body, { mode, duration });
  if (action === IMAGE2VIDEO) {
    if (given(body.image)) body.image = klingImage(body.image);
    if (given(body.image_tail)) body.image_tail = klingImage(body.image_tail);
  } else if (!given(body.aspect_ratio)) {
    const size = given(fields.size) ? String(fields.size) : undefined;
    const aspect = size === undefined ? DEFAULT_ASPECT_RATIO : aspectOfSize(size);
    if (!aspect) return 'size must have the aspect ratio 16:9, 9:16 or 1:1';
    body.aspect_ratio = aspect;
  }
  return { action, body };
}

/** `{base}/v1/videos/{text2video|image2video}[/{id}]`. */
export function klingUrl(channel: Pick<ChannelSnapshot, 'baseUrl'>, action: string, id?: string): string {
  const endpoint = action === IMAGE2VIDEO ? 'image2video' : 'text2video';
  const base = `${channel.baseUrl.replace(/\/+$/, '')}/v1/videos/${endpoint}`;
  return id === undefined ? base : `${base}/${encodeURIComponent(id)}`;
}

const UPSTREAM_STATUS: Record<string, VideoStatus> = {
  submitted: 'SUBMITTED',
  processing: 'IN_PROGRESS',
  succeed: 'SUCCESS',
  failed: 'FAILURE',
};
/** Kling reports no progress figure: a processing task is shown half done. */
const PROGRESS: Record<VideoStatus, number> = { SUBMITTED: 0, QUEUED: 0, IN_PROGRESS: 50, SUCCESS: 100, FAILURE: 100 };

/** A Kling task answer (`{code: 0, data: {task_id, task_status, …}}`) in the gateway's statuses. */
export function readKlingTask(value: unknown): (VideoState & { id: string }) | undefined {
  if (!isRecord(value) || value.code !== 0 || !isRecord(value.data)) return undefined;
  const { data } = value;
  if (typeof data.task_id !== 'string' || data.task_id === '') return undefined;
  const status = UPSTREAM_STATUS[String(data.task_status ?? 'submitted')];
  if (!status) return undefined;
  const videos = isRecord(data.task_result) && Array.isArray(data.task_result.videos) ? data.task_result.videos : [];
  const url = isRecord(videos[0]) && typeof videos[0].url === 'string' ? videos[0].url : '';
  const message = typeof data.task_status_msg === 'string' ? data.task_status_msg : '';
  return {
    id: data.task_id,
    status,
    progress: percent(status, PROGRESS[status]),
    failReason: status === 'FAILURE' ? message || 'video generation failed' : '',
    ...(status === 'SUCCESS' && url !== '' ? { url } : {}),
  };
}

/** Kling's error (`{code, message, request_id}`, code a number) passed on with its HTTP status. */
function klingRefusalDetail(text: string): RefusalDetail | undefined {
  const body = jsonRecord(text);
  // A numbered refusal answered 200 is the client's request refused: 400.
  return typeof body?.code === 'number'
    ? { code: String(body.code), message: body.message, status: 400 }
    : { message: body?.message };
}

/**
 * Kling's video API (type 50): `POST /v1/videos/text2video` or `/image2video` with a JWT signed from
 * the channel's `AccessKey|SecretKey`, then `GET` the same endpoint's `/{task_id}` until it succeeds
 * or fails; the finished video is the URL Kling gives. Billed per call like new-api: Kling adds no
 * ratio of its own (a 10-second or pro clip is priced by the model's own ModelPrice).
 */
export const klingVideo: VideoTasks = {
  plan(job: VideoJob): VideoPlan | string {
    const request = klingRequest(job);
    if (typeof request === 'string') return request;
    const { body, action } = request;
    return {
      ratios: {},
      seconds: String(body.duration),
      size: typeof body.aspect_ratio === 'string' ? body.aspect_ratio : '',
      action,
    };
  },

  async submit(channel, key, job): Promise<UpstreamRequest> {
    const request = klingRequest(job);
    // plan() accepted this job before; a refusal here would be a bug, not the client's input.
    if (typeof request === 'string') throw new Error(request);
    return jsonPost(klingUrl(channel, request.action), klingHeaders(key), request.body);
  },

  accepted(status, text): VideoAccepted | VideoRefusal {
    const task = status === 200 ? readKlingTask(jsonRecord(text)) : undefined;
    if (!task) return refusalOf(status, text, klingRefusalDetail);
    const { id, ...state } = task;
    // A task failed at once is still one the poller settles (and refunds).
    return { id, state: state.status === 'FAILURE' ? { status: 'SUBMITTED', progress: '0%', failReason: '' } : state };
  },

  async query(channel, key, task): Promise<UpstreamRequest> {
    return { url: klingUrl(channel, task.action, task.upstreamId), method: 'GET', headers: klingHeaders(key) };
  },

  state(status, text) {
    if (status !== 200) return undefined;
    const task = readKlingTask(jsonRecord(text));
    if (!task) return undefined;
    const { id: _id, ...state } = task;
    return state;
  },
};
