import type { ChannelSnapshot } from '../../types.ts';
import type { UpstreamRequest } from '../types.ts';
import { isRecord } from '../video-fields.ts';
import {
  errorObject,
  jsonPost,
  jsonRecord,
  percent,
  refusalOf,
  type VideoAccepted,
  type VideoJob,
  type VideoPlan,
  type VideoRefusal,
  type VideoState,
  type VideoStatus,
  type VideoTasks,
} from '../video-tasks.ts';

/** Clip lengths and frame sizes OpenAI's Videos API accepts (its own validation, checked before billing). */
export const SORA_SECONDS = ['4', '8', '12'] as const;
export const SORA_SIZES = ['720x1280', '1280x720', '1024x1792', '1792x1024'] as const;
const DEFAULT_SECONDS = '4';
const DEFAULT_SIZE = '720x1280';
/** The large frames cost more (new-api's size ratio for Sora). */
const LARGE_SIZE_RATIO = 1.666667;

export interface SoraParams {
  seconds: string;
  size: string;
}

/** The submission's clip length and size, defaulted as OpenAI does; an error message when they are not OpenAI's. */
export function soraParams(seconds: unknown, size: unknown): SoraParams | string {
  const s = seconds === undefined || seconds === null || seconds === '' ? DEFAULT_SECONDS : String(seconds);
  const z = size === undefined || size === null || size === '' ? DEFAULT_SIZE : String(size);
  if (!(SORA_SECONDS as readonly string[]).includes(s)) return `seconds must be one of ${SORA_SECONDS.join(', ')}`;
  if (!(SORA_SIZES as readonly string[]).includes(z)) return `size must be one of ${SORA_SIZES.join(', ')}`;
  return { seconds: s, size: z };
}

/** The task's own ratios (new-api's "other ratios"): the seconds, and the size for the large frames. */
export function soraRatios(params: SoraParams): { seconds: number; size: number } {
  const large = params.size === '1024x1792' || params.size === '1792x1024';
  return { seconds: Number(params.seconds), size: large ? LARGE_SIZE_RATIO : 1 };
}

/** `{base}/v1{path}`. */
export function soraUrl(channel: Pick<ChannelSnapshot, 'baseUrl'>, path: string): string {
  return `${channel.baseUrl.replace(/\/+$/, '')}/v1${path}`;
}

const UPSTREAM_STATUS: Record<string, VideoStatus> = {
  queued: 'QUEUED',
  in_progress: 'IN_PROGRESS',
  completed: 'SUCCESS',
  failed: 'FAILURE',
};

/** An upstream video object in the gateway's statuses; undefined when it is not one. */
export function readSoraVideo(value: unknown): (VideoState & { id: string }) | undefined {
  if (!isRecord(value) || typeof value.id !== 'string' || value.id === '') return undefined;
  const status = UPSTREAM_STATUS[String(value.status)];
  if (!status) return undefined;
  const error = isRecord(value.error) ? value.error : undefined;
  return {
    id: value.id,
    status,
    progress: percent(status, value.progress),
    failReason: status === 'FAILURE' ? String(error?.message ?? 'video generation failed') : '',
  };
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}`, accept: 'application/json' });

/**
 * OpenAI's Videos API (Sora, type 55): `POST /v1/videos` in the client's own encoding (JSON, or
 * multipart with a reference image), `GET /v1/videos/{id}` until completed, the bytes from
 * `/v1/videos/{id}/content`, and remixes of a finished video.
 */
export const soraVideo: VideoTasks = {
  plan(job: VideoJob): VideoPlan | string {
    if (job.fields.image !== undefined || job.fields.images !== undefined) {
      return 'a Sora channel takes a reference image as input_reference on POST /v1/videos';
    }
    const params = soraParams(job.fields.seconds, job.fields.size);
    if (typeof params === 'string') return params;
    return { ratios: soraRatios(params), seconds: params.seconds, size: params.size };
  },

  async submit(channel, key, job) {
    const url = soraUrl(channel, '/videos');
    if (job.form) {
      job.form.set('model', job.upstreamModel);
      const encoded = new Response(job.form);
      return {
        url,
        method: 'POST',
        headers: { ...bearer(key), 'content-type': encoded.headers.get('content-type') ?? 'multipart/form-data' },
        body: Buffer.from(await encoded.arrayBuffer()),
      };
    }
    // Only the Videos API's own fields reach a Sora upstream.
    const fields = Object.fromEntries(
      ['prompt', 'seconds', 'size', 'input_reference']
        .filter((name) => job.fields[name] !== undefined)
        .map((name) => [name, job.fields[name]]),
    );
    return jsonPost(url, bearer(key), { model: job.upstreamModel, ...fields });
  },

  accepted(status, body): VideoAccepted | VideoRefusal {
    const video = status === 200 ? readSoraVideo(jsonRecord(body)) : undefined;
    if (!video) return refusalOf(status, body, errorObject);
    const { id, ...state } = video;
    // A video that failed at once is still a task the poller settles (and refunds).
    return { id, state: state.status === 'FAILURE' ? { status: 'SUBMITTED', progress: '0%', failReason: '' } : state };
  },

  async query(channel, key, task): Promise<UpstreamRequest> {
    return {
      url: soraUrl(channel, `/videos/${encodeURIComponent(task.upstreamId)}`),
      method: 'GET',
      headers: bearer(key),
    };
  },

  state(status, body) {
    if (status !== 200) return undefined;
    const video = readSoraVideo(jsonRecord(body));
    if (!video) return undefined;
    const { id: _id, ...state } = video;
    return state;
  },

  async content(channel, key, task, variant) {
    return {
      url: soraUrl(
        channel,
        `/videos/${encodeURIComponent(task.upstreamId)}/content?variant=${encodeURIComponent(variant)}`,
      ),
      method: 'GET',
      headers: { authorization: `Bearer ${key}` },
    };
  },

  async remix(channel, key, task, prompt) {
    return jsonPost(soraUrl(channel, `/videos/${encodeURIComponent(task.upstreamId)}/remix`), bearer(key), { prompt });
  },
};
