import type { ChannelSnapshot } from '../../types.ts';
import type { UpstreamRequest } from '../types.ts';
import { channelBase, isRecord, shortSide, videoImages, videoMetadata, wholeSeconds } from '../video-fields.ts';
import {
  jsonPost,
  jsonRecord,
  refusalOf,
  type VideoAccepted,
  type VideoJob,
  type VideoPlan,
  type VideoRefusal,
  type VideoState,
  type VideoStatus,
  type VideoTasks,
} from '../video-tasks.ts';

export const VIDEO_SYNTHESIS_PATH = '/api/v1/services/aigc/video-generation/video-synthesis';
export const WAN_RESOLUTIONS = ['480P', '720P', '1080P'] as const;
const DEFAULT_SECONDS = 5;
/** Wan's longest clip (wan2.5 renders 10 s; each model's own limits are DashScope's to refuse). */
const MAX_SECONDS = 10;

/**
 * DashScope's price per second of each resolution, for the Wan models whose price depends on it
 * (yuan, Bailian's list): a clip costs its seconds × its resolution's price over the cheapest one's.
 */
const PRICE_PER_SECOND: Readonly<Record<string, Readonly<Record<string, number>>>> = {
  'wan2.5-i2v-preview': { '480P': 0.3, '720P': 0.6, '1080P': 1 },
  'wan2.2-i2v-plus': { '480P': 0.14, '1080P': 0.7 },
  'wan2.2-kf2v-flash': { '480P': 0.1, '720P': 0.2, '1080P': 0.48 },
  'wan2.2-i2v-flash': { '480P': 0.1, '720P': 0.2 },
  'wan2.2-s2v': { '480P': 0.5, '720P': 0.9 },
};

/** The resolution's price over the model's cheapest one; undefined for models priced alike at every resolution. */
export function wanResolutionRatio(model: string, resolution: string): number | undefined {
  const prices = PRICE_PER_SECOND[model];
  const price = prices?.[resolution];
  if (!prices || price === undefined) return undefined;
  // Six decimals, as new-api shows ratios (0.7 / 0.14 is 5, not 4.999999999999999).
  return Math.round((price / Math.min(...Object.values(prices))) * 1e6) / 1e6;
}

/** Image-to-video models (i2v, first-and-last-frame kf2v) and speech-to-video (s2v) render at a `resolution`. */
const takesResolution = (model: string) => /-(i2v|kf2v|s2v)/.test(model);
/** Image-to-video models refuse a task without its image. */
const needsImage = (model: string) => /-(i2v|kf2v)/.test(model);

/** The default resolution DashScope renders each image model at. */
function defaultResolution(model: string): string {
  if (model.startsWith('wan2.5') || model.startsWith('wan2.2-i2v-plus')) return '1080P';
  return '720P';
}

export interface WanSynthesis {
  model: string;
  input: Record<string, unknown>;
  parameters: Record<string, unknown>;
}

export interface WanPlan {
  synthesis: WanSynthesis;
  seconds: number;
  /** The resolution tier priced and shown (`480P`…), or the frame (`W*H`) a text model renders. */
  shown: string;
  tier: string | undefined;
}

/** The video-synthesis body from the job's fields; an error message where DashScope would refuse them. */
export function wanSynthesis(job: Pick<VideoJob, 'upstreamModel' | 'prompt' | 'fields'>): WanPlan | string {
  const { fields } = job;
  const model = job.upstreamModel;
  const images = videoImages(fields);
  if (typeof images === 'string') return images;
  const metadata = videoMetadata(fields);
  if (typeof metadata === 'string') return metadata;
  const extraInput = metadata.input ?? {};
  const extraParameters = metadata.parameters ?? {};
  if (!isRecord(extraInput) || !isRecord(extraParameters))
    return 'metadata.input and metadata.parameters must be objects';
  const seconds = wholeSeconds(extraParameters.duration ?? fields.seconds, DEFAULT_SECONDS, MAX_SECONDS);
  if (typeof seconds === 'string') return seconds;

  const input: Record<string, unknown> = { prompt: job.prompt };
  if (model.includes('kf2v')) {
    // First-and-last-frame models take the two frames by name.
    if (images[0]) input.first_frame_url = images[0];
    if (images[1]) input.last_frame_url = images[1];
  } else {
    const image = fields.img_url ?? fields.input_reference ?? images[0];
    if (typeof image === 'string' && image !== '') input.img_url = image;
  }
  Object.assign(input, extraInput);
  const frame = model.includes('kf2v') ? input.first_frame_url : input.img_url;
  if (needsImage(model) && (typeof frame !== 'string' || frame === '')) {
    return `${model} makes a video from an image: send image (a URL or data URI)`;
  }

  const parameters: Record<string, unknown> = { duration: seconds };
  const given = extraParameters.resolution ?? extraParameters.size ?? fields.resolution ?? fields.size;
  const side = shortSide(given);
  let tier: string | undefined;
  let shown: string;
  if (side !== undefined) {
    // A frame: text models take it as `size` (W*H); image models as the resolution of its short side.
    tier = `${side}P`;
    const size = String(given).replace('x', '*');
    if (takesResolution(model)) parameters.resolution = tier;
    else parameters.size = size;
    shown = takesResolution(model) ? tier : size;
  } else if (given !== undefined && given !== null && given !== '') {
    tier = String(given).toUpperCase();
    if (!tier.endsWith('P')) tier = `${tier}P`;
    parameters.resolution = tier;
    shown = tier;
  } else {
    tier = takesResolution(model) ? defaultResolution(model) : undefined;
    if (tier) parameters.resolution = tier;
    shown = tier ?? '';
  }
  if (parameters.resolution !== undefined && !(WAN_RESOLUTIONS as readonly string[]).includes(tier ?? '')) {
    return `resolution must be one of ${WAN_RESOLUTIONS.join(', ')}`;
  }
  const { resolution: _r, size: _s, duration: _d, ...otherParameters } = extraParameters;
  return {
    synthesis: { model, input, parameters: { ...otherParameters, ...parameters } },
    seconds,
    shown,
    tier,
  };
}

const STATUSES: Record<string, VideoStatus> = {
  PENDING: 'QUEUED',
  RUNNING: 'IN_PROGRESS',
  SUCCEEDED: 'SUCCESS',
  FAILED: 'FAILURE',
  CANCELED: 'FAILURE',
  UNKNOWN: 'FAILURE',
};

/** A DashScope task (`output.task_status`, `video_url`) in the gateway's statuses; undefined when it is not one. */
export function readWanTask(body: Record<string, unknown> | undefined): VideoState | undefined {
  const output = body && isRecord(body.output) ? body.output : undefined;
  const status = output && STATUSES[String(output.task_status)];
  if (!output || !status) return undefined;
  if (status === 'SUCCESS') {
    const url = typeof output.video_url === 'string' && output.video_url !== '' ? output.video_url : undefined;
    return url ? { status, progress: '100%', failReason: '', url } : undefined;
  }
  if (status === 'FAILURE') {
    const reason = [output.code, output.message].filter((part) => typeof part === 'string' && part !== '').join(': ');
    return { status, progress: '100%', failReason: reason || `task ${String(output.task_status)}` };
  }
  return { status, progress: status === 'IN_PROGRESS' ? '50%' : '0%', failReason: '' };
}

/**
 * Ali's Wan video models (type 17) on DashScope: an asynchronous video-synthesis task
 * (`X-DashScope-Async: enable`, the Bearer key) read with `GET /api/v1/tasks/{id}` until it has
 * SUCCEEDED with a video URL. Priced as new-api prices it: × the seconds, and × the resolution's
 * price ratio for the models whose price depends on it.
 */
export const wanVideo: VideoTasks = {
  plan(job: VideoJob): VideoPlan | string {
    const plan = wanSynthesis(job);
    if (typeof plan === 'string') return plan;
    const resolution = plan.tier && wanResolutionRatio(job.upstreamModel, plan.tier);
    return {
      ratios: { seconds: plan.seconds, ...(resolution ? { resolution } : {}) },
      seconds: String(plan.seconds),
      size: plan.shown,
    };
  },

  async submit(channel: ChannelSnapshot, key: string, job: VideoJob): Promise<UpstreamRequest> {
    const plan = wanSynthesis(job);
    if (typeof plan === 'string') throw new Error(plan);
    return jsonPost(
      `${channelBase(channel)}${VIDEO_SYNTHESIS_PATH}`,
      { authorization: `Bearer ${key}`, 'x-dashscope-async': 'enable' },
      plan.synthesis,
    );
  },

  accepted(status, body): VideoAccepted | VideoRefusal {
    const answer = status === 200 ? jsonRecord(body) : undefined;
    const output = answer && isRecord(answer.output) ? answer.output : undefined;
    const id = output?.task_id;
    if (typeof id !== 'string' || id === '') return refusalOf(status, body, jsonRecord);
    const state = readWanTask(answer);
    // A task that failed at once is still a task the poller settles (and refunds).
    return {
      id,
      state: state && state.status !== 'FAILURE' ? state : { status: 'SUBMITTED', progress: '0%', failReason: '' },
    };
  },

  async query(channel, key, task) {
    return {
      url: `${channelBase(channel)}/api/v1/tasks/${encodeURIComponent(task.upstreamId)}`,
      method: 'GET',
      headers: { authorization: `Bearer ${key}` },
    };
  },

  state(status, body) {
    return status === 200 ? readWanTask(jsonRecord(body)) : undefined;
  },
};
