import type { ChannelSnapshot } from '../../types.ts';
import type { UpstreamRequest } from '../types.ts';
import { channelBase, isRecord, resolutionTier, videoImages, videoMetadata, wholeSeconds } from '../video-fields.ts';
import {
  jsonPost,
  jsonRecord,
  perCallPlan,
  refusalOf,
  type VideoAccepted,
  type VideoJob,
  type VideoPlan,
  type VideoRefusal,
  type VideoState,
  type VideoTasks,
} from '../video-tasks.ts';
import { minimaxErrorStatus, minimaxFailure } from './errors.ts';

export const HAILUO_RESOLUTIONS = ['512P', '720P', '768P', '1080P'] as const;
/** Hailuo renders 6 or 10 second clips (the 01 series 6 only; MiniMax refuses what a model lacks). */
const HAILUO_SECONDS = [6, 10];
const DEFAULT_SECONDS = 6;
/** The Hailuo 02/2.3 models render 768P by default, the 01 series (T2V-01, I2V-01, S2V-01…) 720P. */
const defaultResolution = (model: string) => (/^MiniMax-Hailuo/i.test(model) ? '768P' : '720P');

export interface HailuoGeneration {
  model: string;
  prompt: string;
  duration: number;
  resolution: string;
  first_frame_image?: string;
  last_frame_image?: string;
  [extra: string]: unknown;
}

/** The video_generation body from the job's fields; an error message where MiniMax would refuse them. */
export function hailuoGeneration(
  job: Pick<VideoJob, 'upstreamModel' | 'prompt' | 'fields'>,
): HailuoGeneration | string {
  const { fields } = job;
  const images = videoImages(fields);
  if (typeof images === 'string') return images;
  const metadata = videoMetadata(fields);
  if (typeof metadata === 'string') return metadata;
  const duration = wholeSeconds(metadata.duration ?? fields.seconds, DEFAULT_SECONDS, Math.max(...HAILUO_SECONDS));
  if (typeof duration === 'string') return duration;
  if (!HAILUO_SECONDS.includes(duration)) return `duration must be one of ${HAILUO_SECONDS.join(', ')}`;
  const resolution = resolutionTier(
    metadata.resolution ?? fields.resolution ?? fields.size,
    HAILUO_RESOLUTIONS,
    defaultResolution(job.upstreamModel),
  );
  if (!resolution) return `resolution must be one of ${HAILUO_RESOLUTIONS.join(', ')}`;
  const first = fields.first_frame_image ?? images[0];
  const last = fields.last_frame_image ?? images[1];
  // MiniMax's optional fields pass as sent.
  const extras = Object.fromEntries(
    ['prompt_optimizer', 'fast_pretreatment', 'callback_url', 'aigc_watermark', 'subject_reference']
      .filter((name) => fields[name] !== undefined)
      .map((name) => [name, fields[name]]),
  );
  return {
    ...extras,
    ...metadata,
    model: job.upstreamModel,
    prompt: job.prompt,
    duration,
    resolution,
    ...(typeof first === 'string' && first !== '' ? { first_frame_image: first } : {}),
    ...(typeof last === 'string' && last !== '' ? { last_frame_image: last } : {}),
  };
}

/** A query answer (`status`, `file_id`) in the gateway's statuses; undefined when MiniMax could not answer it. */
export function readHailuoState(body: Record<string, unknown> | undefined): VideoState | undefined {
  if (!body) return undefined;
  const base = isRecord(body.base_resp) ? body.base_resp : {};
  const message = typeof base.status_msg === 'string' && base.status_msg !== 'success' ? base.status_msg : '';
  if (body.status === 'Fail') {
    return { status: 'FAILURE', progress: '100%', failReason: message || 'video generation failed' };
  }
  // A refused query (rate limit, key trouble) says nothing about the task: it is asked again later.
  if (typeof base.status_code === 'number' && base.status_code !== 0) return undefined;
  switch (body.status) {
    case 'Preparing':
    case 'Queueing':
      return { status: 'QUEUED', progress: '0%', failReason: '' };
    case 'Processing':
      return { status: 'IN_PROGRESS', progress: '50%', failReason: '' };
    case 'Success':
      // The video's address is one more call away (fileUrl), by its file id.
      return typeof body.file_id === 'string' || typeof body.file_id === 'number'
        ? { status: 'SUCCESS', progress: '100%', failReason: '', file: String(body.file_id) }
        : undefined;
    default:
      return undefined;
  }
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}`, accept: 'application/json' });

function refusal(status: number, body: string): VideoRefusal {
  const failure = minimaxFailure(body);
  if (failure) {
    return {
      refused: true,
      status: minimaxErrorStatus(failure.code),
      code: String(failure.code),
      message: `MiniMax ${failure.code}: ${failure.message}`,
    };
  }
  return refusalOf(status, body, () => undefined);
}

/**
 * MiniMax Hailuo video (type 35), with the channel's Bearer key: `POST /v1/video_generation`, then
 * `GET /v1/query/video_generation?task_id=` until Success names a file, whose download address
 * `GET /v1/files/retrieve?file_id=` gives. Priced per call, as new-api prices Hailuo.
 */
export const hailuoVideo: VideoTasks = {
  plan(job: VideoJob): VideoPlan | string {
    return perCallPlan(hailuoGeneration(job));
  },

  async submit(channel: ChannelSnapshot, key: string, job: VideoJob): Promise<UpstreamRequest> {
    const generation = hailuoGeneration(job);
    if (typeof generation === 'string') throw new Error(generation);
    return jsonPost(`${channelBase(channel)}/v1/video_generation`, bearer(key), generation);
  },

  accepted(status, body): VideoAccepted | VideoRefusal {
    const answer = status === 200 && !minimaxFailure(body) ? jsonRecord(body) : undefined;
    const id = answer?.task_id;
    if (typeof id !== 'string' || id === '') return refusal(status, body);
    return { id, state: { status: 'SUBMITTED', progress: '0%', failReason: '' } };
  },

  async query(channel, key, task) {
    return {
      url: `${channelBase(channel)}/v1/query/video_generation?task_id=${encodeURIComponent(task.upstreamId)}`,
      method: 'GET',
      headers: bearer(key),
    };
  },

  state(status, body) {
    return status === 200 ? readHailuoState(jsonRecord(body)) : undefined;
  },

  fileUrl: {
    async request(channel, key, file) {
      return {
        url: `${channelBase(channel)}/v1/files/retrieve?file_id=${encodeURIComponent(file)}`,
        method: 'GET',
        headers: bearer(key),
      };
    },
    read(status, body) {
      if (status !== 200 || minimaxFailure(body)) return undefined;
      const file = jsonRecord(body)?.file;
      const url = isRecord(file) ? file.download_url : undefined;
      return typeof url === 'string' && url !== '' ? url : undefined;
    },
  },
};
