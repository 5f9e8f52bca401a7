import type { ChannelSnapshot } from '../../types.ts';
import type { UpstreamRequest } from '../types.ts';
import { channelBase, isRecord, resolutionTier, videoImages, videoMetadata, wholeSeconds } from '../video-fields.ts';
import {
  jsonPost,
  jsonRecord,
  perCallPlan,
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

export const VIDU_RESOLUTIONS = ['360p', '540p', '720p', '1080p'] as const;
const AMPLITUDES = ['auto', 'small', 'medium', 'large'];
/** Vidu's longest clip (viduq2 goes to 10 s; the older models to 8). */
const MAX_SECONDS = 10;
/** Reference-to-video takes up to seven subject images. */
const MAX_IMAGES = 7;

/** The q models render 5 s at 1080p by default; vidu2.0 and vidu1.5 4 s, and 720p serves both their lengths. */
const defaultsOf = (model: string) =>
  model.startsWith('viduq') ? { seconds: 5, resolution: '1080p' } : { seconds: 4, resolution: '720p' };

/** Which creation endpoint the reference images call for (new-api's choice by their count). */
export function viduPath(images: number): string {
  if (images === 0) return '/text2video';
  if (images === 1) return '/img2video';
  if (images === 2) return '/start-end2video';
  return '/reference2video';
}

export interface ViduCreation {
  model: string;
  images: string[];
  prompt: string;
  duration: number;
  resolution: string;
  movement_amplitude: string;
  [extra: string]: unknown;
}

/** The creation body Vidu takes, from the job's fields; an error message where Vidu would refuse them. */
export function viduCreation(job: Pick<VideoJob, 'upstreamModel' | 'prompt' | 'fields'>): ViduCreation | string {
  const { fields } = job;
  const images = videoImages(fields);
  if (typeof images === 'string') return images;
  if (images.length > MAX_IMAGES) return `Vidu takes at most ${MAX_IMAGES} reference images`;
  const metadata = videoMetadata(fields);
  if (typeof metadata === 'string') return metadata;
  const defaults = defaultsOf(job.upstreamModel);
  const duration = wholeSeconds(metadata.duration ?? fields.seconds, defaults.seconds, MAX_SECONDS);
  if (typeof duration === 'string') return duration;
  // `resolution`, else `size`, metadata's over the body's.
  const given = { ...fields, ...metadata };
  const resolution = resolutionTier(given.resolution ?? given.size, VIDU_RESOLUTIONS, defaults.resolution);
  if (!resolution) return `resolution must be one of ${VIDU_RESOLUTIONS.join(', ')}`;
  const amplitude = String(metadata.movement_amplitude ?? fields.movement_amplitude ?? 'auto');
  if (!AMPLITUDES.includes(amplitude)) return `movement_amplitude must be one of ${AMPLITUDES.join(', ')}`;
  // Vidu's optional extras (seed, bgm, payload, callback_url, style, …) pass as sent.
  const extras = Object.fromEntries(
    ['seed', 'bgm', 'payload', 'callback_url', 'style', 'aspect_ratio']
      .filter((name) => fields[name] !== undefined)
      .map((name) => [name, fields[name]]),
  );
  return {
    ...extras,
    ...metadata,
    model: job.upstreamModel,
    images,
    prompt: job.prompt,
    duration,
    resolution,
    movement_amplitude: amplitude,
  };
}

const STATES: Record<string, VideoStatus> = {
  created: 'SUBMITTED',
  queueing: 'QUEUED',
  processing: 'IN_PROGRESS',
  success: 'SUCCESS',
  failed: 'FAILURE',
};

/** A Vidu task answer (`state`, `err_code`, `creations`) in the gateway's statuses; undefined when it is not one. */
export function readViduState(body: Record<string, unknown> | undefined): VideoState | undefined {
  const status = body && STATES[String(body.state)];
  if (!body || !status) return undefined;
  if (status === 'SUCCESS') {
    const [first] = Array.isArray(body.creations) ? body.creations : [];
    const url = isRecord(first) && typeof first.url === 'string' && first.url !== '' ? first.url : undefined;
    // Finished without a video to show yet: asked again at the next poll.
    return url ? { status, progress: '100%', failReason: '', url } : undefined;
  }
  return {
    status,
    progress: percent(status, status === 'IN_PROGRESS' ? 50 : 0),
    failReason: status === 'FAILURE' ? String(body.err_code || body.message || 'video generation failed') : '',
  };
}

const headers = (key: string) => ({ authorization: `Token ${key}`, accept: 'application/json' });

/** Vidu's refusal names its `reason` (or `err_code`, or `code`) and a `message` (else the reason). */
function viduRefusalDetail(body: string): RefusalDetail | undefined {
  const error = jsonRecord(body);
  return (
    error && {
      code: error.reason ?? error.err_code ?? error.code,
      message: error.message ?? error.reason ?? error.err_code,
    }
  );
}

/**
 * Vidu's enterprise API (type 52), `Authorization: Token <key>`: text, image, start-end and
 * reference creations under `/ent/v2`, then `GET /ent/v2/tasks/{id}/creations` until it is done.
 * Priced per call as new-api does (Vidu's credits are not multiplied in); the clip shows its
 * duration and resolution.
 */
export const viduVideo: VideoTasks = {
  plan(job: VideoJob): VideoPlan | string {
    return perCallPlan(viduCreation(job));
  },

  async submit(channel: ChannelSnapshot, key: string, job: VideoJob): Promise<UpstreamRequest> {
    const creation = viduCreation(job);
    if (typeof creation === 'string') throw new Error(creation);
    return jsonPost(`${channelBase(channel)}/ent/v2${viduPath(creation.images.length)}`, headers(key), creation);
  },

  accepted(status, body): VideoAccepted | VideoRefusal {
    const answer = status === 200 ? jsonRecord(body) : undefined;
    const id = answer?.task_id;
    if (!answer || typeof id !== 'string' || id === '') return refusalOf(status, body, viduRefusalDetail);
    if (answer.state === 'failed') {
      return { refused: true, status: 400, code: 'task_failed', message: String(answer.err_code || 'task failed') };
    }
    return { id, state: readViduState(answer) ?? { status: 'SUBMITTED', progress: '0%', failReason: '' } };
  },

  async query(channel, key, task) {
    return {
      url: `${channelBase(channel)}/ent/v2/tasks/${encodeURIComponent(task.upstreamId)}/creations`,
      method: 'GET',
      headers: headers(key),
    };
  },

  state(status, body) {
    return status === 200 ? readViduState(jsonRecord(body)) : undefined;
  },
};
